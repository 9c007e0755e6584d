package fileargs

import (
	"bytes"
	"io"
	"strings"
	"testing"
)

// IDScan reads the top-level id wherever it comes, split anywhere, and
// never an "id" nested in params or inside a string.
func TestIDScanFindsTheTopLevelID(t *testing.T) {
	for _, c := range []struct{ body, want string }{
		{`{"method":"tools/call","params":{"id":9,"x":"\"id\":8"},"jsonrpc":"2.0","id":7}`, `7`},
		{`{"params":{"a":[{"id":1}]} , "id" : "a \"b\" c" }`, `"a \"b\" c"`},
		{`{"id":null,"method":"m"}`, `null`},
		{`{"method":"notifications/x","params":{"id":3}}`, ``},
		{`{"params":{"k":"v"},"id":` + strings.Repeat("1", 300) + `}`, ``},
	} {
		for split := range len(c.body) {
			var s IDScan
			r := s.Wrap(strings.NewReader(c.body[:split]), true)
			if _, err := io.Copy(io.Discard, r); err != nil {
				t.Fatal(err)
			}
			rest := c.body[split:]
			head, tail := rest[:len(rest)/2], strings.NewReader(rest[len(rest)/2:])
			if got := s.Find(nil, []byte(head), tail); string(got) != c.want {
				t.Fatalf("%s split at %d: id %q, want %q", c.body, split, got, c.want)
			}
		}
	}
}

// A known id is kept; a scan not on reads nothing.
func TestIDScanOff(t *testing.T) {
	var s IDScan
	src := strings.NewReader(`{"id":1}`)
	if r := s.Wrap(src, false); r != io.Reader(src) {
		t.Fatal("Wrap off: want src itself")
	}
	rest := bytes.NewReader([]byte(`{"id":2}`))
	if got := s.Find(nil, nil, rest); got != nil || rest.Len() != 8 {
		t.Fatalf("Find of a scan not on: %q, %d bytes left; want nil and nothing read", got, rest.Len())
	}
	if got := (*IDScan)(nil).Find([]byte(`5`), nil, rest); string(got) != "5" {
		t.Fatalf("known id: %q", got)
	}
}
