package session

import (
	"log/slog"
	"time"

	"github.com/mcpblob/mcpblob/core/mcp/credwatch"
	"github.com/mcpblob/mcpblob/core/mcp/events"
	"github.com/mcpblob/mcpblob/core/mcp/jsonrpc"
	"github.com/mcpblob/mcpblob/core/mcp/sse"
)

// GetStream is what a session's standalone GET stream is served from.
type GetStream struct {
	// Events are the hub's change events for the stream's audience.
	Events <-chan events.Event
	// Closing is closed when the server closes.
	Closing <-chan struct{}
	// KeepAlive is the interval of SSE comment lines.
	KeepAlive time.Duration
	// Watch watches the credential that opened the stream.
	Watch *credwatch.Watch
	// Prompts reports whether the server offers prompts (then their
	// list_changed is sent).
	Prompts bool
	Log     *slog.Logger
}

// ServeGetStream serves the session's standalone GET stream on out: the
// server-to-client messages of its Outbox and the notifications its change
// events make, until the client leaves, the session ends, the server
// closes or the credential that opened it is no longer accepted (then it
// just ends: the GET stream carries no responses).
func (sess *State) ServeGetStream(out *sse.Writer, g GetStream) error {
	tick := time.NewTicker(g.KeepAlive)
	defer tick.Stop()
	if err := out.Comment(); err != nil {
		return err
	}
	for {
		var err error
		select {
		case <-sess.Done():
			return nil
		case <-g.Closing:
			return nil
		case <-g.Watch.C():
			if e := g.Watch.Fired(); e != nil {
				return sess.credentialEnded(g.Log, e)
			}
		case m := <-sess.Outbox():
			if e := g.Watch.Ended(); e != nil {
				return sess.credentialEnded(g.Log, e)
			}
			err = out.Event(m)
		case ev := <-g.Events:
			if e := g.Watch.Ended(); e != nil {
				return sess.credentialEnded(g.Log, e)
			}
			if msg := sess.eventMessage(ev, g.Prompts); msg != nil {
				err = out.Event(msg)
			}
		case <-tick.C:
			err = out.Comment()
		}
		if err != nil {
			return err
		}
	}
}

// credentialEnded notes that a GET stream ended with its credential.
func (sess *State) credentialEnded(log *slog.Logger, e *jsonrpc.Error) error {
	log.Debug("mcp: a GET stream ended with its credential", "principal", sess.Principal, "reason", e.Data)
	return nil
}

// eventMessage turns a hub event into the notification the session should
// see, or nil.
func (sess *State) eventMessage(ev events.Event, prompts bool) []byte {
	switch ev.Kind {
	case events.ResourceUpdated:
		if sess.Subscribed(ev.URI) {
			return jsonrpc.EncodeNotification("notifications/resources/updated", map[string]any{"uri": ev.URI})
		}
	case events.ResourceListChanged:
		return jsonrpc.EncodeNotification("notifications/resources/list_changed", nil)
	case events.ToolListChanged:
		return jsonrpc.EncodeNotification("notifications/tools/list_changed", nil)
	case events.PromptListChanged:
		if prompts {
			return jsonrpc.EncodeNotification("notifications/prompts/list_changed", nil)
		}
	}
	return nil
}
