package events

import "testing"

func TestHub(t *testing.T) {
	t.Parallel()
	var h Hub
	h.Publish(Event{Kind: ToolListChanged}) // no subscriber: nothing to do
	a, stopA := h.Subscribe("")
	b, stopB := h.Subscribe("")
	h.PublishResourceChange("blob:///k", "")
	for _, ch := range []<-chan Event{a, b} {
		if ev := <-ch; ev != (Event{Kind: ResourceUpdated, URI: "blob:///k"}) {
			t.Fatalf("first event %+v", ev)
		}
		if ev := <-ch; ev.Kind != ResourceListChanged {
			t.Fatalf("second event %+v", ev)
		}
	}
	stopB()
	// A subscriber that falls behind loses events; Publish never blocks.
	for range 100 {
		h.Publish(Event{Kind: PromptListChanged})
	}
	if len(a) != cap(a) || len(b) != 0 {
		t.Fatalf("buffered %d of %d (and %d after unsubscribing)", len(a), cap(a), len(b))
	}
	stopA()
}

// TestHubAudiences: an addressed event reaches only its audience; an
// unaddressed one reaches everyone.
func TestHubAudiences(t *testing.T) {
	t.Parallel()
	var h Hub
	alice, stopA := h.Subscribe("ns:alice")
	defer stopA()
	bob, stopB := h.Subscribe("ns:bob")
	defer stopB()
	open, stopO := h.Subscribe("")
	defer stopO()
	h.PublishResourceChange("blob:///secret", "ns:alice")
	h.Publish(Event{Kind: ToolListChanged})
	if len(alice) != 3 || len(bob) != 1 || len(open) != 1 {
		t.Fatalf("alice %d, bob %d, unaddressed %d events; want 3, 1, 1", len(alice), len(bob), len(open))
	}
	if ev := <-bob; ev.Kind != ToolListChanged {
		t.Fatalf("bob got %+v", ev)
	}
	if ev := <-alice; ev.URI != "blob:///secret" {
		t.Fatalf("alice got %+v", ev)
	}
}
