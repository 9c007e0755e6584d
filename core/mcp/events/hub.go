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
	// Audience addresses the event: "" is for every subscriber, any
	// other value only for the subscribers of that audience (a tenant's
	// namespace, say, whose URIs mean nothing to anyone else).
	Audience string
}

// Hub fans change events out to open notification streams (2025-11-25 GET
// streams and 2026-07-28 subscriptions/listen streams) in this process.
// Anything that changes blobs (delete_blob, uploads, the control API) calls
// Publish. Delivery is best effort: a subscriber that falls behind by more
// than its buffer loses events, which is harmless for list_changed and
// updated notifications (clients re-read). The zero value is ready to use.
type Hub struct {
	mu   sync.Mutex
	subs map[chan Event]string // subscriber → its audience
}

// Publish sends e without blocking to every subscriber it is addressed to:
// all of them when e.Audience is "", else those of that audience.
func (h *Hub) Publish(e Event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for ch, aud := range h.subs {
		if e.Audience != "" && e.Audience != aud {
			continue
		}
		select {
		case ch <- e:
		default:
		}
	}
}

// PublishResourceChange announces to audience that the resource uri was
// created, replaced or deleted: resources/updated for its subscribers and
// list_changed for everyone in the audience.
func (h *Hub) PublishResourceChange(uri, audience string) {
	h.Publish(Event{Kind: ResourceUpdated, URI: uri, Audience: audience})
	h.Publish(Event{Kind: ResourceListChanged, Audience: audience})
}

// Subscribe returns a channel of the events for audience (those published
// for it and those for everyone) and a function that ends the subscription.
func (h *Hub) Subscribe(audience string) (<-chan Event, func()) {
	ch := make(chan Event, 64)
	h.mu.Lock()
	if h.subs == nil {
		h.subs = map[chan Event]string{}
	}
	h.subs[ch] = audience
	h.mu.Unlock()
	return ch, func() {
		h.mu.Lock()
		delete(h.subs, ch)
		h.mu.Unlock()
	}
}
