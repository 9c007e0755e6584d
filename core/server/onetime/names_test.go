package onetime

import (
	"strconv"
	"testing"
)

// TestSessionNamesExact: the cached record name of an id is SessionName's,
// for ids that share a slot (more ids than slots) and after their slots
// were taken by others.
func TestSessionNamesExact(t *testing.T) {
	c := newSessionNames()
	ids := make([]string, 3*nameSlots)
	for i := range ids {
		ids[i] = "sess-" + strconv.Itoa(i)
	}
	for round := range 2 {
		for _, id := range ids {
			if got := c.of(id); got != SessionName(id) {
				t.Fatalf("round %d: name of %q is %q, want %q", round, id, got, SessionName(id))
			}
			if got := c.of(id); got != SessionName(id) { // a hit
				t.Fatalf("round %d: cached name of %q is %q, want %q", round, id, got, SessionName(id))
			}
		}
	}
}
