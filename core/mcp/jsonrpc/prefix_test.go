package jsonrpc

import (
	"encoding/json"
	"testing"
)

// TestResponsePrefix: ResponsePrefix is AppendResponsePrefix's bytes, in a
// slice exactly as long as its capacity (one allocation, no growth).
func TestResponsePrefix(t *testing.T) {
	for _, id := range []json.RawMessage{json.RawMessage(`7`), json.RawMessage(`"a-long-string-id-0123456789"`), nil} {
		got := ResponsePrefix(id)
		if want := AppendResponsePrefix(nil, id); string(got) != string(want) {
			t.Errorf("ResponsePrefix(%s) = %s, want %s", id, got, want)
		}
		if len(got) != cap(got) {
			t.Errorf("ResponsePrefix(%s): len %d, cap %d", id, len(got), cap(got))
		}
	}
}
