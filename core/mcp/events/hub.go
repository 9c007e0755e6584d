package events

import "sync"

// Kind says what changed.
type Kind int

// Event kinds published on a [Hub].
const (
	ResourceUpdated     Kind = iota + 1 // URI names the resource
	ResourceListChanged                 // the resources list changed
	ToolListChanged                     // the tools list changed
	PromptListChanged                   // the prompts list changed
)

// Event is one change notification.
type Event struct {
	Kind Kind
	URI  string // for ResourceUpdated
}

// Hub fans change events out to open notification streams (2025-11-25 GET
// streams and 2026-07-28 subscriptions/listen streams) in this process.
// Anything that changes blobs (delete_blob, uploads, the control API) calls
// Publish. Delivery is best effort: a subscriber that falls behind by more
// than its buffer loses events, which is harmless for list_changed and
// updated notifications (clients re-read). The zero value is ready to use.
type Hub struct {
	mu   sync.Mutex
	subs map[chan Event]struct{}
}

// Publish sends e to every subscriber without blocking.
func (h *Hub) Publish(e Event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for ch := range h.subs {
		select {
		case ch <- e:
		default:
		}
	}
}

// PublishResourceChange announces that the resource uri was created,
// replaced or deleted: resources/updated for its subscribers and
// list_changed for everyone.
func (h *Hub) PublishResourceChange(uri string) {
	h.Publish(Event{Kind: ResourceUpdated, URI: uri})
	h.Publish(Event{Kind: ResourceListChanged})
}

// Subscribe returns a channel of events and a function that ends the
// subscription.
func (h *Hub) Subscribe() (<-chan Event, func()) {
	ch := make(chan Event, 64)
	h.mu.Lock()
	if h.subs == nil {
		h.subs = map[chan Event]struct{}{}
	}
	h.subs[ch] = struct{}{}
	h.mu.Unlock()
	return ch, func() {
		h.mu.Lock()
		delete(h.subs, ch)
		h.mu.Unlock()
	}
}
