package observe

import (
	"encoding/json"
	"strings"
	"testing"
)

// TraceMeta keeps only the trace context members, as copies (not slices
// of the request's body), and none over the W3C bounds.
func TestTraceMeta(t *testing.T) {
	body := []byte(`"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"`)
	meta := map[string]json.RawMessage{
		"traceparent":     body,
		"baggage":         json.RawMessage(`"` + strings.Repeat("k=v,", 3000) + `"`),
		"progressToken":   json.RawMessage(`7`),
		"io.example/data": json.RawMessage(`"x"`),
	}
	got := TraceMeta(meta)
	if len(got) != 1 || string(got["traceparent"]) != string(body) {
		t.Fatalf("TraceMeta = %v; want traceparent alone (baggage is over 8 KiB)", got)
	}
	body[1] = 'X'
	if got["traceparent"][1] == 'X' {
		t.Error("the kept traceparent shares the request body's bytes")
	}
	if TraceMeta(map[string]json.RawMessage{"progressToken": json.RawMessage(`1`)}) != nil || TraceMeta(nil) != nil {
		t.Error("a _meta without trace context keeps something")
	}
}
