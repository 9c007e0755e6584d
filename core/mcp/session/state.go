package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/mcpblob/mcpblob/core/budget"
	"github.com/mcpblob/mcpblob/core/mcp/jsonrpc"
	"github.com/mcpblob/mcpblob/core/mcp/sse"
)

// idleAfter is how long a session without a GET stream or a request in
// flight stays without being used before [State.Idle] reports it.
const idleAfter = time.Hour

// State is the node-local state of one session. ID, Version, Caps and
// Expires are set by [New] and never change, Principal is set before the
// state is shared and never changes; the rest is behind methods that take
// the session's lock.
type State struct {
	ID        string
	Version   string
	Caps      json.RawMessage // client capabilities object
	Expires   time.Time
	Principal string // the principal the signed session id is bound to
	// Streams are the session's resumable SSE streams (SEP-1699).
	Streams sse.Streams

	mu        sync.Mutex
	logLevel  int
	subs      map[string]bool
	subBytes  int64  // the bytes of subs' URIs
	subBudget Budget // what subs are charged to, once one is
	getStream bool
	outbox    chan []byte
	pending   map[string]chan *jsonrpc.Message
	nextID    int64
	inflight  map[string]context.CancelFunc
	cancelled map[string]bool
	lastSeen  time.Time
	done      chan struct{}
	closed    bool
}

// New returns the state of session id; caps nil is an empty object.
func New(id, version string, caps json.RawMessage, expires time.Time) *State {
	if caps == nil {
		caps = json.RawMessage("{}")
	}
	return &State{
		ID: id, Version: version, Caps: caps, Expires: expires,
		subs: map[string]bool{}, outbox: make(chan []byte, 64),
		pending: map[string]chan *jsonrpc.Message{}, inflight: map[string]context.CancelFunc{},
		cancelled: map[string]bool{}, lastSeen: time.Now(), done: make(chan struct{}),
	}
}

// Done is closed when the session ends ([State.Close]).
func (sess *State) Done() <-chan struct{} { return sess.done }

// Outbox carries messages for the session's GET stream.
func (sess *State) Outbox() <-chan []byte { return sess.outbox }

// Close ends the session: Done is closed, every request in flight is
// cancelled and the resource subscriptions are dropped, given back to the
// budget they were charged to. Calling it again does nothing. Whoever
// drops a state from a [Table] closes it.
func (sess *State) Close() {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	if !sess.closed {
		sess.closed = true
		close(sess.done)
		for _, cancel := range sess.inflight {
			cancel()
		}
		if len(sess.subs) > 0 {
			sess.subBudget.Give(sess.Principal, int64(len(sess.subs)), sess.subBytes)
		}
		sess.subs, sess.subBytes = nil, 0
	}
}

// Touch records that the session was used now.
func (sess *State) Touch() {
	sess.mu.Lock()
	sess.lastSeen = time.Now()
	sess.mu.Unlock()
}

// Idle reports whether the session, unused for an hour before now, has
// neither a GET stream nor a request in flight.
func (sess *State) Idle(now time.Time) bool {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	return now.Sub(sess.lastSeen) > idleAfter && !sess.getStream && len(sess.inflight) == 0
}

// Busy reports whether the session has a GET stream or a request in
// flight: a busy session is never evicted to make room for another.
func (sess *State) Busy() bool {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	return sess.getStream || len(sess.inflight) > 0
}

// LogLevel is the level logging/setLevel chose (0, debug, unless set).
func (sess *State) LogLevel() int {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	return sess.logLevel
}

// SetLogLevel sets the log level (logging/setLevel).
func (sess *State) SetLogLevel(n int) {
	sess.mu.Lock()
	sess.logLevel = n
	sess.mu.Unlock()
}

// MaxSubscriptions bounds a session's resource subscriptions.
const MaxSubscriptions = 1024

// ErrTooManySubscriptions is Subscribe's answer at MaxSubscriptions.
var ErrTooManySubscriptions = fmt.Errorf("a session holds at most %d resource subscriptions", MaxSubscriptions)

// ErrClosed is Subscribe's answer on a session that has ended.
var ErrClosed = errors.New("the session has ended")

// Budget is what resource subscriptions are charged to: the pools of how
// many a principal holds and of their URIs' bytes.
type Budget struct{ Count, Bytes *budget.Pool }

// Take takes n subscriptions of uriBytes URI bytes for principal, from
// both pools or neither (the refusal is a *budget.Exceeded).
func (b Budget) Take(principal string, n, uriBytes int64) (*budget.Holding, error) {
	return budget.TakeAll(principal, budget.Units{Pool: b.Count, N: n}, budget.Units{Pool: b.Bytes, N: uriBytes})
}

// Give gives back what Take took.
func (b Budget) Give(principal string, n, uriBytes int64) {
	b.Count.Give(principal, n)
	b.Bytes.Give(principal, uriBytes)
}

// Subscribe adds (on) or removes a resource subscription, whether or not
// the resource exists (yet). A new one is charged to b first, one
// subscription and the URI's bytes for the session's principal, and
// refused with b's error over its budget, with ErrTooManySubscriptions
// beyond MaxSubscriptions, with ErrClosed once the session ended. A
// removed one is given back, and Close gives back the rest: every call on
// a state passes the same b (the server's).
func (sess *State) Subscribe(uri string, on bool, b Budget) error {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	n := int64(len(uri))
	switch {
	case !on:
		if sess.subs[uri] {
			delete(sess.subs, uri)
			sess.subBytes -= n
			sess.subBudget.Give(sess.Principal, 1, n)
		}
		return nil
	case sess.subs[uri]:
		return nil
	case sess.closed:
		return ErrClosed
	case len(sess.subs) >= MaxSubscriptions:
		return ErrTooManySubscriptions
	}
	if _, err := b.Take(sess.Principal, 1, n); err != nil {
		return err
	}
	sess.subs[uri], sess.subBytes, sess.subBudget = true, sess.subBytes+n, b
	return nil
}

// Subscribed reports whether the session subscribed to uri.
func (sess *State) Subscribed(uri string) bool {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	return sess.subs[uri]
}

// pendingKey is the key of server-to-client request id.
func pendingKey(id int64) string { return jsonrpc.IDKey(json.RawMessage(strconv.FormatInt(id, 10))) }

// NewPending allocates the id of a server-to-client request and the
// channel its answer arrives on ([State.Deliver]); DropPending forgets it.
func (sess *State) NewPending() (int64, chan *jsonrpc.Message) {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	sess.nextID++
	id := sess.nextID
	ch := make(chan *jsonrpc.Message, 1)
	sess.pending[pendingKey(id)] = ch
	return id, ch
}

// DropPending forgets server-to-client request id.
func (sess *State) DropPending(id int64) {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	delete(sess.pending, pendingKey(id))
}

// Deliver routes a client's response to the waiting server request; the
// request then owns the response's files. A response nobody waits for is
// dropped.
func (sess *State) Deliver(m *jsonrpc.Message) {
	sess.mu.Lock()
	ch := sess.pending[jsonrpc.IDKey(m.ID)]
	sess.mu.Unlock()
	if ch != nil {
		m.Files.Keep() // the waiting request owns them now
		select {
		case ch <- m:
		default:
			m.Files.Discard()
		}
	}
}

// Track records the client request id in flight and how to cancel it;
// Untrack forgets it once answered.
func (sess *State) Track(id json.RawMessage, cancel context.CancelFunc) {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	sess.inflight[jsonrpc.IDKey(id)] = cancel
}

// Untrack forgets request id (see [State.Track]).
func (sess *State) Untrack(id json.RawMessage) {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	delete(sess.inflight, jsonrpc.IDKey(id))
	delete(sess.cancelled, jsonrpc.IDKey(id))
}

// WasCancelled reports whether the client cancelled request id.
func (sess *State) WasCancelled(id json.RawMessage) bool {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	return sess.cancelled[jsonrpc.IDKey(id)]
}

// Notification handles a client notification: notifications/cancelled
// cancels the request it names, if in flight.
func (sess *State) Notification(method string, params map[string]json.RawMessage) {
	switch method {
	case "notifications/cancelled":
		raw, ok := params["requestId"]
		if !ok {
			return
		}
		k := jsonrpc.IDKey(raw)
		sess.mu.Lock()
		cancel := sess.inflight[k]
		if cancel != nil {
			sess.cancelled[k] = true
		}
		sess.mu.Unlock()
		if cancel != nil {
			cancel()
		}
	default:
		// notifications/initialized, roots/list_changed, progress: nothing to do.
	}
}

// ClaimGetStream claims the session's one standalone GET stream; false when
// it is taken or the session ended.
func (sess *State) ClaimGetStream() bool {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	if sess.getStream || sess.closed {
		return false
	}
	sess.getStream = true
	return true
}

// ReleaseGetStream releases the GET stream ClaimGetStream claimed.
func (sess *State) ReleaseGetStream() {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	sess.getStream = false
}

// Ask sends the server-to-client request method with send (the call's SSE
// stream) and waits for the client's answer, until ctx ends or timeout;
// sent, when set, learns the request id before it goes out. An error
// answer is an error naming the method (its files are discarded).
func (sess *State) Ask(ctx context.Context, method string, params any, timeout time.Duration,
	send func(msg []byte) error, sent func(id int64)) (*jsonrpc.Message, error) {
	id, ch := sess.NewPending()
	defer sess.DropPending(id)
	if sent != nil {
		sent(id)
	}
	if err := send(jsonrpc.EncodeRequest(id, method, params)); err != nil {
		return nil, err
	}
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case m := <-ch:
		if m.Error != nil {
			m.Files.Discard()
			var e jsonrpc.Error
			_ = json.Unmarshal(m.Error, &e)
			return nil, fmt.Errorf("mcp: client answered %s with error %d: %s", method, e.Code, e.Message)
		}
		return m, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-t.C:
		return nil, fmt.Errorf("mcp: no answer to %s within %v", method, timeout)
	}
}
