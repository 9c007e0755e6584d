package jsonrpc

import (
	"encoding/json"
	"testing"
)

// FuzzPlainString: PlainString's fast decode agrees with encoding/json
// whenever it takes the value, and it takes the common one.
func FuzzPlainString(f *testing.F) {
	for _, s := range []string{`"blob:///bench/4k.bin"`, `""`, `"a\"b"`, `"a\\b"`, `"\u00e9"`, `"é"`, "\"a\x01\"", `"a"b"`,
		`"`, `1`, `null`, `"\ud800"`, "\"\xff\"", `"a\/b"`, ` "a"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		got, ok := PlainString(raw)
		var want string
		err := json.Unmarshal(raw, &want)
		if ok && (err != nil || got != want) {
			t.Fatalf("PlainString(%q) = %q; encoding/json: %q, %v", raw, got, want, err)
		}
		if string(raw) == `"blob:///bench/4k.bin"` && !ok {
			t.Fatalf("PlainString refused %q", raw)
		}
	})
}

// TestStringParam: absent and null are "", a string is decoded (plain or
// escaped), anything else is encoding/json's error.
func TestStringParam(t *testing.T) {
	params := map[string]json.RawMessage{"plain": json.RawMessage(`"a/b"`), "escaped": json.RawMessage(`"caf\u00e9"`),
		"null": json.RawMessage(`null`), "number": json.RawMessage(`7`)}
	for name, want := range map[string]string{"plain": "a/b", "escaped": "café", "null": "", "absent": ""} {
		if got, err := StringParam(params, name); got != want || err != nil {
			t.Errorf("StringParam(%s) = %q, %v; want %q", name, got, err, want)
		}
	}
	if _, err := StringParam(params, "number"); err == nil {
		t.Error("StringParam(number): no error")
	}
}
