package session

import (
	"context"
	"encoding/json"
	"testing"
	"time"

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
	sess.Subscribe("blob:///a", true)
	sess.Subscribe("blob:///b", true)
	sess.Subscribe("blob:///b", false)
	if !sess.Subscribed("blob:///a") || sess.Subscribed("blob:///b") {
		t.Fatal("subscriptions")
	}
	sess.SetLogLevel(3)
	if sess.LogLevel() != 3 {
		t.Fatal("log level")
	}
}
