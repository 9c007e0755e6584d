package server

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcpblob/mcpblob/core/conformance"
)

func TestLegacyGetStreamNotifications(t *testing.T) {
	parallel(t)
	c := serveMCP(t, Options{}, legacyVersion, `{}`)
	if r := c.call("resources/subscribe", `{"uri":"blob:///docs/readme.txt"}`); r.status != 200 {
		t.Fatalf("subscribe: %d", r.status)
	}
	events := c.events(c.get(""))
	// A second GET stream on the same session is refused.
	if r := c.send(c.get("")); r.status != http.StatusConflict {
		t.Fatalf("second GET stream: %d, want 409", r.status)
	}
	if r := c.callTool("delete_blob", `{"key":"docs/readme.txt"}`); r.status != 200 || !strings.Contains(string(r.body), `"deleted":true`) {
		t.Fatalf("delete_blob: %d %s", r.status, r.body)
	}
	seen := map[string]bool{}
	for len(seen) < 2 {
		m, ok := events.next()
		if !ok {
			t.Fatalf("GET stream ended; saw %v", seen)
		}
		seen[m.Method] = true
		if m.Method == "notifications/resources/updated" && !strings.Contains(string(m.Params), "blob:///docs/readme.txt") {
			t.Fatalf("updated params %s", m.Params)
		}
	}
	if !seen["notifications/resources/updated"] || !seen["notifications/resources/list_changed"] {
		t.Fatalf("notifications seen: %v", seen)
	}
}

func TestLegacyElicitationRoundTrip(t *testing.T) {
	parallel(t)
	c := serveMCP(t, Options{Extend: conformance.Register}, legacyVersion, `{"elicitation":{}}`)
	events := c.events(c.requestID(`"call-1"`, "tools/call", `{"name":"test_elicitation","arguments":{"message":"who are you?"}}`))
	req, ok := events.next()
	if !ok || req.Method != "elicitation/create" || req.ID == nil {
		t.Fatalf("want an elicitation/create request first, got %+v", req)
	}
	if r := c.reply(req.ID, `{"action":"accept","content":{"username":"ada","email":"ada@example.com"}}`); r.status != http.StatusAccepted {
		t.Fatalf("posting the answer: %d, want 202", r.status)
	}
	res, ok := events.next()
	if !ok || string(res.ID) != `"call-1"` || !strings.Contains(string(res.Result), "ada@example.com") {
		t.Fatalf("final result: %+v", res)
	}
}

func TestLegacyCancellation(t *testing.T) {
	parallel(t)
	c := serveMCP(t, Options{Extend: conformance.Register}, legacyVersion, `{"sampling":{}}`)
	events := c.events(c.requestID("5", "tools/call", `{"name":"test_sampling","arguments":{"prompt":"hi"}}`))
	if m, ok := events.next(); !ok || m.Method != "sampling/createMessage" {
		t.Fatalf("want sampling/createMessage, got %+v", m)
	}
	if r := c.notify("notifications/cancelled", `{"requestId":5,"reason":"user"}`); r.status != http.StatusAccepted {
		t.Fatalf("cancel: %d", r.status)
	}
	if m, ok := events.next(); ok {
		t.Fatalf("cancelled request still answered: %+v", m)
	}
}

func TestModernListen(t *testing.T) {
	parallel(t)
	c := serveMCP(t, Options{}, modernVersion, `{}`)
	events := c.events(c.requestID(`"sub-1"`, "subscriptions/listen", `{"notifications":{"resourcesListChanged":true,"resourceSubscriptions":["blob:///images/dot.bin"]}}`))
	ack, ok := events.next()
	if !ok || ack.Method != "notifications/subscriptions/acknowledged" || !strings.Contains(string(ack.Params), `"io.modelcontextprotocol/subscriptionId":"sub-1"`) {
		t.Fatalf("ack: %+v %s", ack, ack.Params)
	}
	del := c.with(map[string]string{"Mcp-Param-Blob-Key": "images/dot.bin"})
	if r := del.callTool("delete_blob", `{"key":"images/dot.bin"}`); r.status != 200 {
		t.Fatalf("delete: %d %s", r.status, r.body)
	}
	seen := map[string]bool{}
	for len(seen) < 2 {
		m, ok := events.next()
		if !ok {
			t.Fatalf("listen stream ended; saw %v", seen)
		}
		if !strings.Contains(string(m.Params), `"io.modelcontextprotocol/subscriptionId":"sub-1"`) {
			t.Fatalf("untagged notification %s %s", m.Method, m.Params)
		}
		seen[m.Method] = true
	}
	if !seen["notifications/resources/updated"] || !seen["notifications/resources/list_changed"] {
		t.Fatalf("seen %v", seen)
	}
}

// TestShutdownEndsStreams checks that Shutdown ends an open GET stream and a
// listen stream (the latter with a final result) instead of waiting them out.
func TestShutdownEndsStreams(t *testing.T) {
	parallel(t)
	base, srv := startTestServer(t, Options{})
	c := newMCPClient(t, base, modernVersion, `{}`)
	listen := c.events(c.requestID("9", "subscriptions/listen", `{"notifications":{"toolsListChanged":true}}`))
	if m, ok := listen.next(); !ok || m.Method != "notifications/subscriptions/acknowledged" {
		t.Fatalf("ack: %+v", m)
	}
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("shutdown took %v", d)
	}
	m, ok := listen.next()
	if !ok || string(m.ID) != "9" || m.Result == nil {
		t.Fatalf("want a final listen result, got %+v (ok=%v)", m, ok)
	}
}

// TestLegacyResume drives SEP-1699: the server ends the POST's connection
// after the priming event, the client resumes with GET + Last-Event-ID and
// receives the result there; replaying from the start of the stream again
// repeats the stored events.
func TestLegacyResume(t *testing.T) {
	parallel(t)
	c := serveMCP(t, Options{Extend: conformance.Register}, legacyVersion, `{}`)
	r := c.send(c.requestID("3", "tools/call", `{"name":"test_reconnection","arguments":{}}`)) // the server closes it mid-call
	body := string(r.body)
	first, _, _ := strings.Cut(body, "\n")
	lastID, ok := strings.CutPrefix(first, "id: ")
	if !ok || !strings.Contains(body, "retry: ") || strings.Contains(body, `"result"`) {
		t.Fatalf("want only a priming event, got %q", body)
	}
	got := string(c.send(c.get(lastID)).body)
	if !strings.Contains(got, `"id":3,"result"`) || !strings.Contains(got, "Reconnection test completed") {
		t.Fatalf("resumed stream: %q", got)
	}
	if again := string(c.send(c.get(lastID)).body); again != got {
		t.Fatalf("second replay differs:\n%q\n%q", again, got)
	}
}
