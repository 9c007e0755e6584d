package mcp

import "testing"

// hasOnly is a Header that answers Has and fails the test on Get.
type hasOnly struct {
	t *testing.T
	h HeaderMap
}

func (h hasOnly) Get(name string) string {
	h.t.Fatalf("Get(%q) called on a Header that has Has", name)
	return ""
}
func (h hasOnly) Has(name string) bool { return h.h.Get(name) != "" }

// TestHasHeader: hasHeader asks Has when the Header offers it (no copy of
// the value), Get otherwise; an empty value is absent either way.
func TestHasHeader(t *testing.T) {
	m := HeaderMap{"Mcp-Session-Id": "sid", "Empty": ""}
	for _, h := range []Header{m, hasOnly{t, m}} {
		if !hasHeader(h, "Mcp-Session-Id") || hasHeader(h, "Empty") || hasHeader(h, "Absent") {
			t.Errorf("%T: hasHeader wrong", h)
		}
	}
}
