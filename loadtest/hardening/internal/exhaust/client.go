package exhaust

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/mcpblob/mcpblob/core/mcp/mcptest"
	"github.com/mcpblob/mcpblob/loadtest/hardening/internal/wire"
)

// Target is the server the phases drive and who drives it.
type Target struct {
	Addr     string
	Attacker string // bearer key of the attacking principal: blobs:read only
	Writer   string // a key of the same principal with blobs:write (pending rounds)
	Limits   Limits
	Workers  int           // requests in flight at once
	Hold     time.Duration // how long held streams and calls stay open once all are opened
	// Secret registers a value the server's logs must never show (session
	// ids, link tokens); the part after the token's last '.' is registered.
	Secret func(kind, token string)
	// Blob is a key in the attacker's namespace (for single-use links).
	Blob string
	// ClaimCount counts the claims the store holds (-1: it cannot tell).
	ClaimCount func() int
	// Admin is the node's admin listener (its /metrics counts the sessions
	// the node holds; only the attacker opens sessions on the node).
	Admin string

	http atomic.Pointer[http.Client]
	ids  atomic.Int64
}

// client is the kept-alive client the short requests share; held streams
// take connections of their own from it.
func (t *Target) client() *http.Client {
	if c := t.http.Load(); c != nil {
		return c
	}
	c := &http.Client{Transport: &http.Transport{Proxy: nil, DisableCompression: true, MaxIdleConnsPerHost: 64,
		DialContext: (&net.Dialer{Timeout: 5 * time.Second}).DialContext},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	t.http.CompareAndSwap(nil, c)
	return t.http.Load()
}

// mcp is a client of version as key, on session sid ("" for none). It
// builds the requests; the answers are read by package wire, whole and raw.
func (t *Target) mcp(version, key, sid string) *mcptest.Client {
	c := mcptest.New("http://"+t.Addr+"/mcp", version).WithBearer(key)
	c.HTTP, c.Session = t.client(), sid
	return c
}

// call is a 2025-11-25 POST of method with params on session sid, with an
// id unique across the phases (calls in flight on one session must not
// share one).
func (t *Target) call(ctx context.Context, key, sid, method string, params any) *http.Request {
	return t.mcp(mcptest.Version20251125, key, sid).NewRequestID(ctx, t.nextID(), method, jsonOf(params)).Request
}

// modern is a 2026-07-28 POST of method with params (the client adds _meta,
// Mcp-Method and, for the methods that name something, Mcp-Name).
func (t *Target) modern(ctx context.Context, key, method string, params any) *http.Request {
	return t.mcp(mcptest.Version20260728, key, "").NewRequestID(ctx, t.nextID(), method, jsonOf(params)).Request
}

func (t *Target) nextID() string { return strconv.FormatInt(t.ids.Add(1), 10) }

func jsonOf(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic("bug: exhaust: params: " + err.Error())
	}
	return string(b)
}

// do sends req and reads the whole answer.
func (t *Target) do(req *http.Request) *wire.Answer {
	return wire.Do(t.client(), req)
}

// initialize opens a 2025-11-25 session with caps (raw JSON) as key; sid is
// "" when the server gave none. It sends no notifications/initialized: a
// session the server holds is what the phases count.
func (t *Target) initialize(ctx context.Context, key string, caps json.RawMessage) (sid string, a *wire.Answer) {
	// caps may be MiBs: spliced in as they are, not re-encoded.
	params := `{"protocolVersion":"` + mcptest.Version20251125 +
		`","clientInfo":{"name":"mcpblob-hardening","version":"1"},"capabilities":` + string(caps) + `}`
	a = t.do(t.mcp(mcptest.Version20251125, key, "").NewRequestID(ctx, t.nextID(), "initialize", params).Request)
	if a.Status == http.StatusOK {
		sid = a.Header.Get("Mcp-Session-Id")
		if sid != "" && t.Secret != nil {
			t.Secret("session id", sid)
		}
	}
	return sid, a
}

// held is a streaming answer kept open until its context is cancelled.
type held struct {
	cancel context.CancelFunc
	body   io.Closer
}

func (h *held) close() {
	h.cancel()
	h.body.Close()
}

// open sends req on a connection of its own and, when the answer is an
// SSE stream, keeps it open: the answer is the status, the headers and
// the first event that carries data (none for a GET stream, whose
// headers say it is open), read within 5 s; without one the answer has no
// status (none came). h is nil when nothing is held.
func (t *Target) open(ctx context.Context, mk func(ctx context.Context) *http.Request, firstEvent bool) (*wire.Answer, *held) {
	cctx, cancel := context.WithCancel(ctx)
	resp, err := t.streams().Do(mk(cctx))
	if err != nil {
		cancel()
		return &wire.Answer{Err: err}, nil
	}
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		defer cancel()
		defer resp.Body.Close()
		return wire.ReadAnswer(resp, nil), nil
	}
	a := &wire.Answer{Status: resp.StatusCode, Header: resp.Header}
	h := &held{cancel: cancel, body: resp.Body}
	if firstEvent {
		timer := time.AfterFunc(5*time.Second, cancel)
		a.Body, a.Err = readEvent(bufio.NewReader(resp.Body))
		if !timer.Stop() {
			a.Err = errNoEvent
		}
		if a.Err != nil {
			a.Status = 0 // a stream that says nothing is no answer
		}
	}
	return a, h
}

// streams is a client for held answers: no connection reuse.
func (t *Target) streams() *http.Client {
	return &http.Client{Transport: streamTransport}
}

var streamTransport = &http.Transport{Proxy: nil, DisableCompression: true, DisableKeepAlives: true,
	DialContext: (&net.Dialer{Timeout: 5 * time.Second}).DialContext}

type eventError string

func (e eventError) Error() string { return string(e) }

const errNoEvent = eventError("no SSE event with data within 5 s")

// readEvent reads SSE lines up to the end of the first event with data
// (a priming event's empty data line does not count), and returns that
// event's lines.
func readEvent(br *bufio.Reader) ([]byte, error) {
	var ev []byte
	data := false
	for len(ev) < 8<<20 {
		line, err := br.ReadBytes('\n')
		ev = append(ev, line...)
		if err != nil {
			return ev, err
		}
		d, isData := bytes.CutPrefix(line, []byte("data:"))
		data = data || (isData && len(bytes.TrimSpace(d)) > 0)
		if len(bytes.TrimSpace(line)) == 0 {
			if data {
				return ev, nil
			}
			ev = ev[:0]
		}
	}
	return ev, eventError("an SSE event over 8 MiB")
}

// closeAll closes every held answer.
func closeAll(hs []*held) {
	for _, h := range hs {
		if h != nil {
			h.close()
		}
	}
}
