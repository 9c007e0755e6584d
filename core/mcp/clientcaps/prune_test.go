package clientcaps

import (
	"encoding/json"
	"testing"
)

// TestPrune: the members read are kept, of them only what is read, and
// the rest goes; the result is canonical (members sorted).
func TestPrune(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`[]`, ``},
		{`{}`, `{}`},
		{`{"elicitation":{"binary":{"maxFileSize":1024,"x":[1,2]},"form":null,"z":{}}}`, `{"elicitation":{"binary":{"maxFileSize":1024},"form":{}}}`},
		{`{"sampling":{"tools":{},"context":{}},"roots":{"listChanged":true},"experimental":{"big":"x"}}`,
			`{"experimental":{},"roots":{},"sampling":{}}`},
		{`{"custom":"yes","n":0,"off":false,"gone":null}`, `{"custom":true,"n":true}`},
		{`{"resourceStreaming":{"maxStreamSize":4096,"other":1}}`, `{"resourceStreaming":{"maxStreamSize":4096}}`},
		{`{"resourceStreaming":{"maxStreamSize":"7"}}`, `{"resourceStreaming":true}`},
		{`{"extensions":{"b":{"v":1},"a":{},"off":false,"gone":null}}`, `{"extensions":{"a":{},"b":{}}}`},
	} {
		if got := Prune(json.RawMessage(c.in)); string(got) != c.want {
			t.Errorf("Prune(%s) = %s; want %s", c.in, got, c.want)
		}
	}
}
