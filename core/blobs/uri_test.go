package blobs

import (
	"strings"
	"testing"
)

func TestURIRoundTrip(t *testing.T) {
	t.Parallel()
	for _, key := range []string{"a", "docs/readme.txt", "dir with space/ünï.txt", "q?x#y%z", "a+b=c&d", "日本/語", "100%", "~tilde_-."} {
		uri := URI(key)
		if !strings.HasPrefix(uri, URIPrefix) || strings.ContainsAny(uri[len(URIPrefix):], " ?#") {
			t.Errorf("URI(%q) = %q: unescaped delimiter", key, uri)
		}
		got, ok := ParseURI(uri)
		if !ok || got != key {
			t.Errorf("ParseURI(%q) = %q, %v; want %q", uri, got, ok, key)
		}
	}
	if got := URI("dir with space/x"); got != "blob:///dir%20with%20space/x" {
		t.Errorf("URI = %q", got)
	}
	for _, bad := range []string{"blob:///", "blob://x/y", "file:///a", "blob:///a%2", "blob:///a%zz", "blob:///%ff", "blob:///a?b", "blob:///a#b"} {
		if k, ok := ParseURI(bad); ok {
			t.Errorf("ParseURI(%q) = %q, want failure", bad, k)
		}
	}
}

func TestContentDisposition(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ disp, name, want string }{
		{"attachment", "", "attachment"},
		{"attachment", "a.txt", `attachment; filename="a.txt"; filename*=UTF-8''a.txt`},
		{"inline", `ünï "q"\.txt`, `inline; filename="_n_ \"q\"\\.txt"; filename*=UTF-8''%C3%BCn%C3%AF%20%22q%22%5C.txt`},
		{"attachment", "a\x01b c", `attachment; filename="ab c"; filename*=UTF-8''a%01b%20c`},
	} {
		if got := ContentDisposition(tc.disp, tc.name); got != tc.want {
			t.Errorf("ContentDisposition(%q, %q) =\n %s\nwant %s", tc.disp, tc.name, got, tc.want)
		}
	}
}
