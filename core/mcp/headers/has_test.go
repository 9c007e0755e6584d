package headers

import "testing"

// hasOnly is a Getter that answers Has and fails the test on Get.
type hasOnly struct {
	t *testing.T
	h headerMap
}

func (h hasOnly) Get(name string) string {
	h.t.Fatalf("Get(%q) called on a Getter that has Has", name)
	return ""
}
func (h hasOnly) Has(name string) bool { return h.h.Get(name) != "" }

// TestHas: Has asks the Getter's Has when it offers one (no copy of the
// value), Get otherwise; an empty value is absent either way.
func TestHas(t *testing.T) {
	m := headerMap{"Mcp-Session-Id": "sid", "Empty": ""}
	for _, h := range []Getter{m, hasOnly{t, m}} {
		if !Has(h, "Mcp-Session-Id") || Has(h, "Empty") || Has(h, "Absent") {
			t.Errorf("%T: Has wrong", h)
		}
	}
}
