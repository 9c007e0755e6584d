package mcp

import (
	"encoding/json"
	"testing"
)

// FuzzPlainString: plainString's fast decode of a string param agrees with
// encoding/json whenever it takes the value, and takes the common one.
func FuzzPlainString(f *testing.F) {
	for _, s := range []string{`"blob:///bench/4k.bin"`, `""`, `"a\"b"`, `"a\\b"`, `"\u00e9"`, `"é"`, "\"a\x01\"", `"a"b"`,
		`"`, `1`, `null`, `"\ud800"`, "\"\xff\"", `"a\/b"`, ` "a"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		got, ok := plainString(raw)
		var want string
		err := json.Unmarshal(raw, &want)
		if ok && (err != nil || got != want) {
			t.Fatalf("plainString(%q) = %q; encoding/json: %q, %v", raw, got, want, err)
		}
		if string(raw) == `"blob:///bench/4k.bin"` && !ok {
			t.Fatalf("plainString refused %q", raw)
		}
	})
}
