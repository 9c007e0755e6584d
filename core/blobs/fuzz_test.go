package blobs

import (
	"mime"
	"strings"
	"testing"
	"unicode/utf8"

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
