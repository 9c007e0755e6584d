package blobs

import (
	"encoding/json"
	"mime"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mcpblob/mcpblob/core/mcp/scan"
	"github.com/mcpblob/mcpblob/storage"
)

// FuzzURI: ParseURI never panics; every valid key survives URI and
// ParseURI; whatever ParseURI accepts maps back to the same key.
func FuzzURI(f *testing.F) {
	for _, s := range []string{"a/b c", "ünï/%41", "a?b#c", "blob:///a%2Fb", "blob:///%zz", "blob:///%4", "blob:///a%00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if storage.ValidateKey(s) == nil {
			if k, ok := ParseURI(URI(s)); !ok || k != s {
				t.Fatalf("key %q: URI %q parses to %q, %v", s, URI(s), k, ok)
			}
		}
		if k, ok := ParseURI(s); ok {
			if k2, ok2 := ParseURI(URI(k)); !ok2 || k2 != k {
				t.Fatalf("ParseURI(%q) = %q, but its URI %q parses to %q, %v", s, k, URI(k), k2, ok2)
			}
		}
	})
}

// FuzzContentDisposition: the header value is printable ASCII whatever the
// name, and a standard parser reads the exact name back (filename*, RFC
// 8187) for every name without control characters.
func FuzzContentDisposition(f *testing.F) {
	for _, s := range []string{"report.pdf", `a"b\c.txt`, "日本語.txt", "x\r\nSet-Cookie: a=b", "%41'é", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		v := ContentDisposition("attachment", name)
		for i := 0; i < len(v); i++ {
			if v[i] < 0x20 || v[i] > 0x7e {
				t.Fatalf("ContentDisposition(%q) = %q: byte %#x", name, v, v[i])
			}
		}
		if name == "" || !utf8.ValidString(name) || strings.ContainsFunc(name, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
			return
		}
		disp, params, err := mime.ParseMediaType(v)
		if err != nil || disp != "attachment" || params["filename"] != name {
			t.Fatalf("ContentDisposition(%q) = %q parses to %q %q, %v", name, v, disp, params["filename"], err)
		}
	})
}

// FuzzArgRules: the checks read from the blob tools' input schemas never
// panic, and a value they pass has the schema's type and bounds.
func FuzzArgRules(f *testing.F) {
	for _, s := range []string{`"k"`, `""`, `60`, `1e99`, `true`, `null`, `["a",""]`, `{"a":1}`, `"` + strings.Repeat("x", 300) + `"`} {
		f.Add(s)
	}
	var rules []*argRules
	for _, name := range []string{"get_download_link.input", "list_blobs.input", "request_upload.input", "key.input"} {
		rules = append(rules, newArgRules(name, schema(name)))
	}
	f.Fuzz(func(t *testing.T, raw string) {
		if !json.Valid([]byte(raw)) {
			return
		}
		raw = strings.Trim(raw, " \t\r\n") // as the scanner hands members over
		for _, r := range rules {
			for name, p := range r.props {
				if p.File != nil || p.check(nil, name, json.RawMessage(raw)) != "" || raw == "null" {
					continue
				}
				var v any
				_ = json.Unmarshal([]byte(raw), &v)
				switch s, isStr := v.(string); p.Type {
				case "string":
					if !isStr || (p.MaxLength != nil && utf8.RuneCountInString(s) > *p.MaxLength) || (p.MinLength != nil && utf8.RuneCountInString(s) < *p.MinLength) {
						t.Fatalf("%s.%s accepted %s", r.tool, name, raw)
					}
				case "integer":
					if _, ok := scan.Integer(json.RawMessage(raw), p.min(), p.max()); !ok {
						t.Fatalf("%s.%s accepted %s", r.tool, name, raw)
					}
				case "boolean":
					if _, isBool := v.(bool); !isBool {
						t.Fatalf("%s.%s accepted %s", r.tool, name, raw)
					}
				}
			}
		}
	})
}
