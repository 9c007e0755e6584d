package hostile

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/mcpblob/mcpblob/loadtest/hardening/internal/wire"
)

// Smuggle is the row of the smuggling payloads on every route but /mcp,
// and smuggleMCP the same row for /mcp, where a JSON-RPC error is the
// route's own shape (the HTTP JSON error body of a refusal made before the
// route was known is clear on both).
var (
	Smuggle    = Surface{"HTTP smuggling", wire.ShapeAPI}
	smuggleMCP = Surface{"HTTP smuggling", wire.ShapeRPC}
)

// smuggleWait is how long a connection is watched after its first answer:
// a server that frames by Transfer-Encoding answers the smuggled request
// within it on loopback.
const smuggleWait = 500 * time.Millisecond

// smuggleRoute is one route the payloads go to; path builds the target
// (minting a token when the route needs one).
type smuggleRoute struct {
	name   string // the path, its token elided
	method string
	stores bool // a success stores an object (so the store audit knows it)
	path   func(ctx context.Context, e *Env) string
}

var smuggleRoutes = []smuggleRoute{
	{"/mcp", http.MethodPost, false, func(context.Context, *Env) string { return "/mcp" }},
	{"/v1/blobs/…", http.MethodPut, true, func(context.Context, *Env) string { return fmt.Sprintf("/v1/blobs/hard/smuggle-%d", next()) }},
	{"/d/<token>", http.MethodGet, false, func(ctx context.Context, e *Env) string { return "/d/" + e.mintLink(ctx, BaseText, false) }},
	{"/u/<token>", http.MethodPut, true, func(ctx context.Context, e *Env) string { return "/u/" + e.MintUpload(ctx, "alice", map[string]any{}) }},
	{"/upload/<token>", http.MethodGet, false, func(ctx context.Context, e *Env) string {
		return "/upload/" + e.MintUpload(ctx, "alice", map[string]any{})
	}},
	{"/healthz", http.MethodGet, false, func(context.Context, *Env) string { return "/healthz" }},
	{"an unknown path", http.MethodGet, false, func(context.Context, *Env) string { return "/no-such-route" }},
}

// smuggling is a payload: the framing lines of the first request and how its
// head ends its lines. Each is a TE.CL or TE.TE primitive: the chunked body
// ends early, and the bytes after it are a second request that a server
// framing by Transfer-Encoding would serve.
type smuggling struct {
	label  string
	lines  []string // after Host and Authorization; %d is Content-Length (the whole rest)
	bareLF bool     // every head line ends in LF alone
}

var smugglings = []smuggling{
	{"Transfer-Encoding: chunked with Content-Length", []string{"Content-Length: %d", "Transfer-Encoding: chunked"}, false},
	{"Transfer-Encoding obs-folded (\\r\\n chunked)", []string{"Content-Length: %d", "Transfer-Encoding:\r\n chunked"}, false},
	{"Transfer-Encoding:\\tchunked", []string{"Content-Length: %d", "Transfer-Encoding:\tchunked"}, false},
	{"Transfer-Encoding: CHUNKED with Content-Length", []string{"Content-Length: %d", "Transfer-Encoding: CHUNKED"}, false},
	{"bare-LF header lines", []string{"Transfer-Encoding: chunked"}, true},
	{"a bare LF hiding Transfer-Encoding in a header", []string{"Content-Length: %d", "X-Pad: a\nTransfer-Encoding: chunked"}, false},
}

// smugglingAbuse sends every payload to every route (RFC 9112 §6.1 and
// §2.2): each must be answered 400, the connection
// closed, and the smuggled GET /healthz never answered.
func smugglingAbuse(context.Context, *Env) []Batch {
	var mcp, cs []Case
	for _, r := range smuggleRoutes {
		for _, s := range smugglings {
			to := &cs
			if r.name == "/mcp" {
				to = &mcp
			}
			*to = append(*to, Case{Name: s.label + " on " + r.method + " " + r.name, Want: WantEither, Stores: r.stores, CheckAlways: true,
				Send: func(ctx context.Context, e *Env) *wire.Answer {
					payload := s.payload(e, r.method, r.path(ctx, e))
					return wire.SendWatch(ctx, e.addr, []byte(payload), r.method, e.caseLimit, smuggleWait)
				}, Check: smuggledCheck})
		}
	}
	return []Batch{{"HTTP smuggling", smuggleMCP, mcp}, {"HTTP smuggling", Smuggle, cs}}
}

// payload is the first request (a chunked body of one chunk, then its
// last-chunk) followed by the smuggled GET /healthz.
func (s smuggling) payload(e *Env, method, target string) string {
	chunked := "5\r\nhello\r\n0\r\n\r\n"
	smuggled := "GET /healthz HTTP/1.1\r\nHost: " + e.addr + "\r\n\r\n"
	lines := []string{fmt.Sprintf("%s %s HTTP/1.1", method, target), "Host: " + e.addr,
		"Authorization: Bearer " + e.apiKeys["alice"], "Content-Type: text/plain"}
	if target == "/mcp" {
		lines[3] = "Content-Type: application/json"
		lines = append(lines, "Accept: application/json, text/event-stream")
	}
	for _, l := range s.lines {
		if strings.Contains(l, "%d") {
			l = fmt.Sprintf(l, len(chunked)+len(smuggled))
		}
		lines = append(lines, l)
	}
	eol := "\r\n"
	if s.bareLF {
		eol = "\n"
	}
	return strings.Join(lines, eol) + eol + eol + chunked + smuggled
}

// smuggledCheck: the first answer is 400, the server closed the
// connection, and the smuggled request got no answer. (Want is WantEither:
// this check says what is wrong with a success in full.)
func smuggledCheck(_ context.Context, _ *Env, a *wire.Answer) string {
	var bad []string
	if a.Status != http.StatusBadRequest {
		bad = append(bad, fmt.Sprintf("answered HTTP %d, want 400", a.Status))
	}
	switch a.After {
	case wire.AfterAnswered:
		bad = append(bad, "the bytes after the first request were served as a request ("+a.Second.String()+")")
	case wire.AfterOpen:
		bad = append(bad, fmt.Sprintf("the connection was kept open (%s after the answer)", smuggleWait))
	}
	return strings.Join(bad, "; ")
}
