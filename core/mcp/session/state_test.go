package session

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/mcpblob/mcpblob/core/budget"
	"github.com/mcpblob/mcpblob/core/mcp/jsonrpc"
)

func TestPendingRequests(t *testing.T) {
	t.Parallel()
	sess := New("sid", "2025-11-25", nil, time.Now().Add(time.Hour))
	if string(sess.Caps) != "{}" {
		t.Fatalf("Caps = %s", sess.Caps)
	}
	id, ch := sess.NewPending()
	sess.Deliver(&jsonrpc.Message{ID: json.RawMessage(`"1"`), Result: json.RawMessage(`{}`)}) // a string id is another id
	sess.Deliver(&jsonrpc.Message{ID: json.RawMessage(`1`), Result: json.RawMessage(`{"ok":true}`)})
	if id != 1 {
		t.Fatalf("first id %d", id)
	}
	select {
	case m := <-ch:
		if string(m.Result) != `{"ok":true}` {
			t.Fatalf("delivered %s", m.Result)
		}
	default:
		t.Fatal("the answer was not delivered")
	}
	sess.DropPending(id)
	sess.Deliver(&jsonrpc.Message{ID: json.RawMessage(`1`), Result: json.RawMessage(`{}`)}) // nobody waits: dropped
	if len(ch) != 0 {
		t.Fatal("an answer was delivered after DropPending")
	}
}

func TestCancellation(t *testing.T) {
	t.Parallel()
	sess := New("sid", "2025-11-25", nil, time.Now().Add(time.Hour))
	ctx, cancel := context.WithCancel(context.Background())
	sess.Track(json.RawMessage(`7`), cancel)
	if sess.Idle(time.Now().Add(2 * time.Hour)) {
		t.Error("a session with a request in flight is idle")
	}
	sess.Notification("notifications/cancelled", map[string]json.RawMessage{"requestId": json.RawMessage(`"7"`)})
	if ctx.Err() != nil || sess.WasCancelled(json.RawMessage(`7`)) {
		t.Fatal("a cancel for string id \"7\" cancelled request 7")
	}
	sess.Notification("notifications/cancelled", map[string]json.RawMessage{"requestId": json.RawMessage(`7`)})
	if ctx.Err() == nil || !sess.WasCancelled(json.RawMessage(`7`)) {
		t.Fatal("notifications/cancelled did not cancel request 7")
	}
	sess.Untrack(json.RawMessage(`7`))
	if sess.WasCancelled(json.RawMessage(`7`)) || !sess.Idle(time.Now().Add(2*time.Hour)) {
		t.Fatal("Untrack kept the request")
	}
	ctx2, cancel2 := context.WithCancel(context.Background())
	sess.Track(json.RawMessage(`8`), cancel2)
	sess.Close()
	sess.Close()
	if ctx2.Err() == nil || sess.ClaimGetStream() {
		t.Fatal("Close left a request running or the GET stream claimable")
	}
	<-sess.Done()
}

func TestGetStreamAndSubscriptions(t *testing.T) {
	t.Parallel()
	sess := New("sid", "2025-11-25", nil, time.Now().Add(time.Hour))
	if !sess.ClaimGetStream() || sess.ClaimGetStream() {
		t.Fatal("the GET stream is not claimed once")
	}
	if sess.Idle(time.Now().Add(2 * time.Hour)) {
		t.Error("a session with a GET stream is idle")
	}
	sess.ReleaseGetStream()
	if !sess.ClaimGetStream() {
		t.Fatal("a released GET stream cannot be claimed")
	}
	b := testBudget(0)
	sess.Subscribe("blob:///a", true, b)
	sess.Subscribe("blob:///b", true, b)
	sess.Subscribe("blob:///b", false, b)
	if !sess.Subscribed("blob:///a") || sess.Subscribed("blob:///b") {
		t.Fatal("subscriptions")
	}
	sess.SetLogLevel(3)
	if sess.LogLevel() != 3 {
		t.Fatal("log level")
	}
}

// testBudget is a subscription budget of at most maxCount subscriptions
// a principal (0: no bound). Its pools panic on a give back of what was
// not taken.
func testBudget(maxCount int64) Budget {
	return Budget{Count: budget.NewPool(budget.Limit{Name: "subscriptions", PerPrincipal: maxCount}, nil),
		Bytes: budget.NewPool(budget.Limit{Name: "subscription_bytes"}, nil)}
}

// held is what b's pools hold in all.
func (b Budget) held() (int64, int64) { return b.Count.Total(), b.Bytes.Total() }

// TestSubscriptionsCharged: every subscription, to a resource that exists
// or not, is charged (count and URI bytes) before it is kept, refused over
// the budget, given back on unsubscribe and, the rest, once at Close; a
// closed session takes none.
func TestSubscriptionsCharged(t *testing.T) {
	t.Parallel()
	b := testBudget(3)
	sess := New("sid", "2025-11-25", nil, time.Now().Add(time.Hour))
	sess.Principal = "alice"
	for _, u := range []string{"blob:///a", "blob:///bb", "blob:///bb", "blob:///ccc"} {
		if err := sess.Subscribe(u, true, b); err != nil {
			t.Fatalf("subscribe %s: %v", u, err)
		}
	}
	if n, bytes := b.held(); n != 3 || bytes != 9+10+11 {
		t.Fatalf("held %d subscriptions of %d bytes, want 3 of 30 (a repeat is not charged twice)", n, bytes)
	}
	var over *budget.Exceeded
	if err := sess.Subscribe("blob:///d", true, b); !errors.As(err, &over) || sess.Subscribed("blob:///d") {
		t.Fatalf("over the budget: %v, subscribed %v", err, sess.Subscribed("blob:///d"))
	}
	sess.Subscribe("blob:///bb", false, b)
	sess.Subscribe("blob:///never", false, b)
	if n, bytes := b.held(); n != 2 || bytes != 20 {
		t.Fatalf("after an unsubscribe: %d of %d bytes, want 2 of 20", n, bytes)
	}
	sess.Close()
	sess.Close()
	if n, bytes := b.held(); n != 0 || bytes != 0 || sess.Subscribed("blob:///a") {
		t.Fatalf("after Close: %d of %d bytes held", n, bytes)
	}
	if err := sess.Subscribe("blob:///e", true, b); !errors.Is(err, ErrClosed) {
		t.Fatalf("subscribe on a closed session: %v, want ErrClosed", err)
	}
	sess.Subscribe("blob:///a", false, b)
	if n, _ := b.held(); n != 0 {
		t.Fatalf("an unsubscribe after Close gave back again: %d", n)
	}
}

// TestSubscriptionsConcurrentClose: subscribes and unsubscribes racing
// Close never give back more than they took (run with -race).
func TestSubscriptionsConcurrentClose(t *testing.T) {
	t.Parallel()
	b := testBudget(0)
	for range 50 {
		sess := New("sid", "2025-11-25", nil, time.Now().Add(time.Hour))
		var wg sync.WaitGroup
		for g := range 4 {
			wg.Go(func() {
				for i := range 20 {
					u := "blob:///" + strconv.Itoa(i%5)
					_ = sess.Subscribe(u, (i+g)%3 != 0, b)
				}
			})
		}
		wg.Go(sess.Close)
		wg.Wait()
		sess.Close()
	}
	if n, bytes := b.held(); n != 0 || bytes != 0 {
		t.Fatalf("%d subscriptions of %d bytes still charged after every session closed", n, bytes)
	}
}
