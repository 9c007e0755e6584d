package scan

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
)

// FuzzRead: the scanner never panics or hangs; whatever object it accepts
// it rebuilds as valid JSON, and a valid JSON object comes out meaning the
// same (strings it takes out of the message aside), its located members
// equal to encoding/json's.
func FuzzRead(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"upload_file","arguments":{"key":"k","file":"data:text/plain,hi"}}}`,
		`{"params":{"arguments":{"file":"data:text\/plain;base64,aGk="}},"method":"tools/call"}`,
		`{"a":"\ud83d\ude00\u002F","b":[1,{"c":null}]}`, `[1]`, `{"a":tru}`, `{"a":"\u12"}`,
		`{"a":01}`, `{"a":1.}`, `{"a":-}`, `{"a":1e}`, `{"id":1,"id":"x","params":{"_meta":{"a":1}},"params":{}}`,
		"{\"\xa1\":{}}",
	} {
		f.Add(seed)
	}
	opts := Options{MaxBodyBytes: 1 << 16, MaxFileBytes: 1 << 16, SpoolDir: f.TempDir()}
	f.Fuzz(func(t *testing.T, in string) {
		m, err := Read(iotest.HalfReader(strings.NewReader(in)), opts, nil)
		diverted := m.Files.Len() > 0 // strings taken out read as ""
		m.Files.Release()
		isObj := strings.HasPrefix(strings.TrimLeft(in, " \t\r\n"), "{")
		valid := json.Valid([]byte(in))
		if err == nil && isObj && !json.Valid(m.Raw) {
			t.Fatalf("accepted %q but rebuilt invalid JSON %q", in, m.Raw)
		}
		var bad *BadJSONError
		if err != nil && !errors.As(err, &bad) && !errors.Is(err, ErrTooLarge) {
			var abort *AbortError
			if !errors.As(err, &abort) {
				t.Fatalf("%q: unexpected error %v", in, err)
			}
		}
		if !isObj || !valid || len(in) >= 4096 || diverted {
			return
		}
		if err != nil {
			t.Fatalf("valid %q: %v", in, err)
		}
		var want, got any
		_ = json.Unmarshal([]byte(in), &want)
		_ = json.Unmarshal(m.Raw, &got)
		if !reflect.DeepEqual(want, got) {
			t.Fatalf("in  %q\nout %q", in, m.Raw)
		}
		var fields map[string]json.RawMessage
		_ = json.Unmarshal([]byte(in), &fields)
		if !sameMembers(t, m.Fields, fields) {
			t.Fatalf("%q: Fields %s, encoding/json %s", in, dump(m.Fields), dump(fields))
		}
	})
}
