package scan

import (
	"encoding/json"
	"errors"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"
)

// FuzzRead: the scanner never panics or hangs; whatever object it accepts
// it rebuilds as valid JSON, and a valid JSON object comes out meaning the
// same (strings it takes out of the message aside), its located members
// equal to encoding/json's; a member it calls repeated is repeated.
func FuzzRead(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"upload_file","arguments":{"key":"k","file":"data:text/plain,hi"}}}`,
		`{"params":{"arguments":{"file":"data:text\/plain;base64,aGk="}},"method":"tools/call"}`,
		`{"a":"\ud83d\ude00\u002F","b":[1,{"c":null}]}`, `[1]`, `{"a":tru}`, `{"a":"\u12"}`,
		`{"a":01}`, `{"a":1.}`, `{"a":-}`, `{"a":1e}`, `{"id":1,"id":"x","params":{"_meta":{"a":1}},"params":{}}`,
		`{"params":{"arguments":{"k":1,"\u006b":2}}}`, `{"params":{"_meta":{"a":{"b":1,"b":2}}}}`,
		"{\"\xa1\":{}}", `{"params":{"arguments":{"n":1e700}}}`,
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
		var (
			bad    *BadJSONError
			abort  *AbortError
			member *MemberError
		)
		if err != nil && !errors.As(err, &bad) && !errors.Is(err, ErrTooLarge) && !errors.As(err, &abort) && !errors.As(err, &member) {
			t.Fatalf("%q: unexpected error %v", in, err)
		}
		if member != nil && member.Repeated && !hasRepeat(in, member.Path) {
			t.Fatalf("%q: %v, but encoding/json sees no repeated member there", in, err)
		}
		if !isObj || !valid || len(in) >= 4096 || diverted || member != nil {
			return
		}
		if err != nil {
			t.Fatalf("valid %q: %v", in, err)
		}
		if !reflect.DeepEqual(decodeAny(t, []byte(in)), decodeAny(t, m.Raw)) {
			t.Fatalf("in  %q\nout %q", in, m.Raw)
		}
		var fields map[string]json.RawMessage
		_ = json.Unmarshal([]byte(in), &fields)
		if !sameMembers(t, m.Fields, fields) {
			t.Fatalf("%q: Fields %s, encoding/json %s", in, dump(m.Fields), dump(fields))
		}
	})
}

// hasRepeat reports whether the object at the container path of member
// (the message, params, params._meta or params.arguments) has the member's
// key more than once, as encoding/json's token stream sees it.
func hasRepeat(in, member string) bool {
	i := strings.LastIndexByte(member, '/')
	container, key := member[:i], UnescapeElem(member[i+1:])
	var walk func(dec *json.Decoder, path string) (bool, error)
	walk = func(dec *json.Decoder, path string) (bool, error) {
		tok, err := dec.Token()
		if err != nil {
			return false, err
		}
		d, ok := tok.(json.Delim)
		if !ok || (d != '{' && d != '[') {
			return false, nil
		}
		seen := map[string]bool{}
		for n := 0; dec.More(); n++ {
			elem := strconv.Itoa(n)
			if d == '{' {
				k, err := dec.Token()
				if err != nil {
					return false, err
				}
				elem = validKey(k.(string))
				if path == container && elem == key && seen[elem] {
					return true, nil
				}
				seen[elem] = true
			}
			if found, err := walk(dec, path+"/"+PathElem(elem)); found || err != nil {
				return found, err
			}
		}
		_, err = dec.Token()
		return false, err
	}
	found, _ := walk(json.NewDecoder(strings.NewReader(in)), "")
	return found
}
