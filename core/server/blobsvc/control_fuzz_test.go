package blobsvc

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcpblob/mcpblob/core/mcp/scan"
)

// FuzzControlJSON: the control API's JSON request check never panics, and
// a body it passes is one JSON object without unknown or repeated fields,
// which encoding/json decodes the same way; ttlSeconds it reads exactly.
func FuzzControlJSON(f *testing.F) {
	for _, s := range []string{`{"key":"k","ttlSeconds":900}`, `{"key":"k","key":"j"}`, `{"bogus":1}`, `{"key":1}`,
		`{"ttlSeconds":9300000000}`, `{"ttlSeconds":6e1}`, `[1]`, `{"filename":"a\r\nb"}`, `{"\u006bey":"k","key":"j"}`, `{}`, `nul`, `null`, ` null `} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		var req struct {
			Key        string          `json:"key"`
			TTLSeconds json.RawMessage `json:"ttlSeconds"`
			Filename   string          `json:"filename"`
			SingleUse  bool            `json:"singleUse"`
		}
		if jsonProblem([]byte(body), &req) != "" {
			return
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal([]byte(body), &m); err != nil || m == nil {
			t.Fatalf("passed %q, not an object: %v", body, err)
		}
		dec := json.NewDecoder(strings.NewReader(body))
		dec.Token()
		seen := map[string]bool{}
		for dec.More() {
			k, _ := dec.Token()
			ks := k.(string)
			if seen[ks] || (ks != "key" && ks != "ttlSeconds" && ks != "filename" && ks != "singleUse") {
				t.Fatalf("passed %q: field %q repeated or unknown", body, ks)
			}
			seen[ks] = true
			var skip json.RawMessage
			dec.Decode(&skip)
		}
		if raw := m["ttlSeconds"]; raw != nil && !bytes.Equal(bytes.TrimSpace(raw), bytes.TrimSpace(req.TTLSeconds)) {
			t.Fatalf("passed %q: ttlSeconds %s read as %s", body, raw, req.TTLSeconds)
		}
		if n, ok := scan.Integer(req.TTLSeconds, 1, 604800); ok && (n < 1 || n > 604800) {
			t.Fatalf("ttlSeconds %s read as %d", req.TTLSeconds, n)
		}
	})
}
