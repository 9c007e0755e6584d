package mcp

import (
	"encoding/json"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// nextWithin is l.next with a deadline: timedOut when no message came and
// the body did not end within d.
func (l *liveResponse) nextWithin(t *testing.T, d time.Duration) (m rpcMessage, ok, timedOut bool) {
	t.Helper()
	type got struct {
		m  rpcMessage
		ok bool
	}
	ch := make(chan got, 1)
	go func() {
		var data strings.Builder
		for {
			line, err := l.br.ReadString('\n')
			if v, found := strings.CutPrefix(strings.TrimRight(line, "\r\n"), "data:"); found {
				data.WriteString(strings.TrimPrefix(v, " "))
			}
			if (strings.TrimSpace(line) == "" || err != nil) && data.Len() > 0 {
				var m rpcMessage
				_ = json.Unmarshal([]byte(data.String()), &m)
				ch <- got{m, true}
				return
			}
			if err != nil {
				ch <- got{}
				return
			}
		}
	}()
	select {
	case g := <-ch:
		return g.m, g.ok, false
	case <-time.After(d):
		l.leave()
		return rpcMessage{}, false, true
	}
}

// openGetStream opens c's GET stream with the credential fields set.
func openGetStream(t *testing.T, c *testClient, expires time.Time, valid func() bool) *liveResponse {
	t.Helper()
	live := newLiveResponse()
	h := c.headers("", "")
	h["Accept"] = "text/event-stream"
	c.s.ServeMCP(&Request{Method: http.MethodGet, Header: h, Principal: c.principal,
		CredentialExpires: expires, CredentialValid: valid}, live)
	if live.status != http.StatusOK {
		t.Fatalf("GET stream: %d", live.status)
	}
	// The stream's first comment is sent once it sees the hub's events.
	if line, err := live.br.ReadString('\n'); err != nil || !strings.HasPrefix(line, ":") {
		t.Fatalf("GET stream's first line %q, %v; want a comment", line, err)
	}
	return live
}

// openListen opens a subscriptions/listen stream for every list change,
// with the credential fields set, and reads its acknowledgement.
func openListen(t *testing.T, c *testClient, expires time.Time, valid func() bool) *liveResponse {
	t.Helper()
	live := newLiveResponse()
	body := c.message("subscriptions/listen", `{"notifications":{"resourcesListChanged":true}}`)
	c.s.ServeMCP(&Request{Method: http.MethodPost, Header: c.headers("subscriptions/listen", ""), Body: strings.NewReader(body),
		Principal: c.principal, CredentialExpires: expires, CredentialValid: valid}, live)
	if m, ok := live.next(t); !ok || m.Method != "notifications/subscriptions/acknowledged" {
		t.Fatalf("listen: want the acknowledgement, got %+v", m)
	}
	return live
}

// endsWith checks that a listen stream's last message is the -32000 error
// naming reason; want "" is a GET stream, which ends without a message.
func endsWith(t *testing.T, live *liveResponse, reason string) {
	t.Helper()
	m, ok, timedOut := live.nextWithin(t, 10*time.Second)
	switch {
	case timedOut:
		t.Fatal("the stream is still open after its credential ended")
	case reason == "" && ok:
		t.Fatalf("the GET stream sent %+v after its credential ended; want a clean end", m)
	case reason == "":
		return
	case !ok || m.Error == nil || m.Error.Code != CodeTransport || !strings.Contains(string(m.Error.Data), `"`+reason+`"`):
		t.Fatalf("listen's last message: %+v (error %+v); want -32000 with reason %s", m, m.Error, reason)
	}
	if m, ok := live.next(t); ok {
		t.Fatalf("a message after the final error: %+v", m)
	}
}

// TestStreamsEndWithCredential: the GET stream and subscriptions/listen
// end when the credential they were opened with expires (on time, with no
// event to prompt it) or is revoked (seen before the next event, which is
// not delivered). 71946bf kept both streams delivering.
func TestStreamsEndWithCredential(t *testing.T) {
	s := NewServer(testImpl, &Options{KeepAlive: time.Hour}) // no keep-alive check: expiry and events alone
	t.Cleanup(func() { _ = s.Close() })
	legacy, modern := newLegacyClientAs(t, s, "alice"), newModernClient(t, s).as("alice")
	soon := time.Now().Add(time.Second)
	get := openGetStream(t, legacy, soon, nil)
	listen := openListen(t, modern, soon, nil)
	s.Hub().Publish(Event{Kind: ResourceListChanged})
	for name, live := range map[string]*liveResponse{"GET": get, "listen": listen} {
		if m, ok, _ := live.nextWithin(t, 10*time.Second); !ok || m.Method != "notifications/resources/list_changed" {
			t.Fatalf("%s stream before expiry: %+v", name, m)
		}
	}
	endsWith(t, get, "")
	endsWith(t, listen, "credential_expired")

	var valid atomic.Bool
	valid.Store(true)
	get = openGetStream(t, newLegacyClientAs(t, s, "bob"), time.Time{}, valid.Load)
	listen = openListen(t, modern.as("bob"), time.Time{}, valid.Load)
	valid.Store(false)
	s.Hub().Publish(Event{Kind: ResourceListChanged})
	endsWith(t, get, "")
	endsWith(t, listen, "credential_revoked")
}

// TestRevocationSeenAtKeepAlive: with no event, a revoked credential ends
// the stream at the next keep-alive interval.
func TestRevocationSeenAtKeepAlive(t *testing.T) {
	s := NewServer(testImpl, &Options{KeepAlive: 50 * time.Millisecond})
	t.Cleanup(func() { _ = s.Close() })
	var valid atomic.Bool
	valid.Store(true)
	get := openGetStream(t, newLegacyClientAs(t, s, "alice"), time.Time{}, valid.Load)
	listen := openListen(t, newModernClient(t, s).as("alice"), time.Time{}, valid.Load)
	time.Sleep(200 * time.Millisecond) // a few keep-alives pass with the credential good
	valid.Store(false)
	endsWith(t, get, "")
	endsWith(t, listen, "credential_revoked")
}
