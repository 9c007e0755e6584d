package events

import "testing"

func TestHub(t *testing.T) {
	t.Parallel()
	var h Hub
	h.Publish(Event{Kind: ToolListChanged}) // no subscriber: nothing to do
	a, stopA := h.Subscribe()
	b, stopB := h.Subscribe()
	h.PublishResourceChange("blob:///k")
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
