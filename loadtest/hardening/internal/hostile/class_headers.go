package hostile

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/mcpblob/mcpblob/loadtest/hardening/internal/wire"
)

// reqParts is a well-formed request on one surface that a framing variant
// then breaks.
type reqParts struct {
	method, target, host string
	hdr                  []string // header lines, Authorization included
	body                 []byte
}

// head writes the request line, Host, the surface's headers, Connection:
// close and then extra; cl adds Content-Length: len(body).
func (p reqParts) head(cl bool, extra ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s HTTP/1.1\r\nHost: %s\r\n", p.method, p.target, p.host)
	for _, h := range append(p.hdr, extra...) {
		b.WriteString(h + "\r\n")
	}
	if cl {
		fmt.Fprintf(&b, "Content-Length: %d\r\n", len(p.body))
	}
	b.WriteString("Connection: close\r\n\r\n")
	return b.String()
}

func (p reqParts) plain(extra ...string) wire.Raw {
	return wire.Raw{Head: p.head(true, extra...), Body: p.body, Method: p.method}
}

// noAuth is p without its Authorization line.
func (p reqParts) noAuth() reqParts {
	q := p
	q.hdr = nil
	for _, h := range p.hdr {
		if !strings.HasPrefix(h, "Authorization:") {
			q.hdr = append(q.hdr, h)
		}
	}
	return q
}

// framing is one way of breaking a request.
type framing struct {
	label string
	want  Want
	mk    func(p reqParts) wire.Raw
}

// openOnD are the variants /d may accept: a GET whose token is the
// credential and which any origin may fetch by design (no Host or Origin
// check), and whose body, if any, is never read.
var openOnD = map[string]bool{
	"chunk size zz": true, "chunk size 7fffffffffffffff": true, "absolute-form target on another host": true,
	"Host: evil.example": true, "Origin: http://evil.example": true, "Origin: null": true, "Origin: http://localhost.evil.example": true,
}

func headOnly(p reqParts, extra ...string) wire.Raw {
	return wire.Raw{Head: p.head(false, extra...), Body: p.body, Method: p.method}
}

func withLine(line string) func(p reqParts) wire.Raw {
	return func(p reqParts) wire.Raw { return p.plain(line) }
}

// framings: Content-Length and Transfer-Encoding abuse (smuggling shapes
// included), oversized and numerous headers, malformed lines, and the
// request line. A request the server cannot parse gets a 4xx with the
// surface's JSON error body, like any other refusal.
var framings = []framing{
	{"Content-Length: -1", WantReject, func(p reqParts) wire.Raw { return headOnly(p, "Content-Length: -1") }},
	{"Content-Length: +N", WantEither, func(p reqParts) wire.Raw { return headOnly(p, fmt.Sprintf("Content-Length: +%d", len(p.body))) }},
	{"Content-Length: N, N", WantEither, func(p reqParts) wire.Raw {
		return headOnly(p, fmt.Sprintf("Content-Length: %d, %d", len(p.body), len(p.body)))
	}},
	{"two different Content-Length headers", WantReject, func(p reqParts) wire.Raw {
		return headOnly(p, fmt.Sprintf("Content-Length: %d", len(p.body)), fmt.Sprintf("Content-Length: %d", len(p.body)+1))
	}},
	{"Content-Length: 99999999999999999999", WantReject, func(p reqParts) wire.Raw { return headOnly(p, "Content-Length: 99999999999999999999") }},
	{"Content-Length: 0x1", WantReject, func(p reqParts) wire.Raw { return headOnly(p, "Content-Length: 0x1") }},
	{"Content-Length with Transfer-Encoding: chunked", WantEither, func(p reqParts) wire.Raw {
		r := headOnly(p, fmt.Sprintf("Content-Length: %d", len(p.body)+5), "Transfer-Encoding: chunked")
		r.Body = fmt.Appendf(nil, "%x\r\n%s\r\n0\r\n\r\n", len(p.body), p.body)
		return r
	}},
	{"chunk size zz", WantReject, func(p reqParts) wire.Raw {
		r := headOnly(p, "Transfer-Encoding: chunked")
		r.Body = []byte("zz\r\nhello\r\n0\r\n\r\n")
		return r
	}},
	{"chunk size 7fffffffffffffff", WantReject, func(p reqParts) wire.Raw {
		r := headOnly(p, "Transfer-Encoding: chunked")
		r.Body = []byte("7fffffffffffffff\r\nhello\r\n0\r\n\r\n")
		return r
	}},
	{"Transfer-Encoding: gzip, chunked", WantEither, func(p reqParts) wire.Raw {
		r := headOnly(p, "Transfer-Encoding: gzip, chunked")
		r.Body = fmt.Appendf(nil, "%x\r\n%s\r\n0\r\n\r\n", len(p.body), p.body)
		return r
	}},
	{"Transfer-Encoding: xchunked", WantReject, func(p reqParts) wire.Raw { return headOnly(p, "Transfer-Encoding: xchunked") }},
	{"one header of 20 KiB", WantReject, withLine("X-Pad: " + strings.Repeat("a", 20<<10))},
	{"one header of 1 MiB", WantReject, withLine("X-Pad: " + strings.Repeat("a", 1<<20))},
	{"1,000 headers", WantEither, func(p reqParts) wire.Raw { return p.plain(manyHeaders(1000)...) }},
	{"10,000 headers", WantReject, func(p reqParts) wire.Raw { return p.plain(manyHeaders(10000)...) }},
	{"a header line without a colon", WantReject, withLine("X-No-Colon")},
	{"whitespace between a header name and its colon", WantReject, withLine("X-Pad : 1")}, // RFC 9112 §5.1: MUST reject
	{"NUL in a header value", WantReject, withLine("X-Pad: a\x00b")},
	{"obs-fold continuation line", WantEither, withLine("X-Pad: a\r\n b")},
	{"HTTP/1.0", WantEither, func(p reqParts) wire.Raw {
		r := p.plain()
		r.Head = strings.Replace(r.Head, " HTTP/1.1\r\n", " HTTP/1.0\r\n", 1)
		return r
	}},
	{"HTTP/2.0 on HTTP/1 framing", WantEither, func(p reqParts) wire.Raw {
		r := p.plain()
		r.Head = strings.Replace(r.Head, " HTTP/1.1\r\n", " HTTP/2.0\r\n", 1)
		return r
	}},
	{"lower-case method", WantEither, func(p reqParts) wire.Raw {
		r := p.plain()
		r.Head = strings.ToLower(p.method) + r.Head[len(p.method):]
		return r
	}},
	{"absolute-form target on another host", WantReject, func(p reqParts) wire.Raw {
		r := p.plain()
		r.Head = strings.Replace(r.Head, " "+p.target+" ", " http://evil.example"+p.target+" ", 1)
		return r
	}},
	{"Host: evil.example", WantReject, func(p reqParts) wire.Raw {
		r := p.plain()
		r.Head = strings.Replace(r.Head, "Host: "+p.host, "Host: evil.example", 1)
		return r
	}},
	{"two Host headers", WantReject, withLine("Host: evil.example")},
	{"Origin: http://evil.example", WantReject, withLine("Origin: http://evil.example")},
	{"Origin: null", WantReject, withLine("Origin: null")},
	{"Origin: http://localhost.evil.example", WantReject, withLine("Origin: http://localhost.evil.example")},
}

func manyHeaders(n int) []string {
	h := make([]string, n)
	for i := range h {
		h[i] = fmt.Sprintf("X-H%d: %d", i, i)
	}
	return h
}

// partsFor is a well-formed request on surface s (an /u token minted for it).
func (e *Env) partsFor(ctx context.Context, s Surface) reqParts {
	auth := "Authorization: Bearer " + e.apiKeys["alice"]
	p := reqParts{host: e.addr}
	switch s {
	case Legacy:
		p.method, p.target = http.MethodPost, "/mcp"
		p.hdr = []string{auth, "Content-Type: application/json", "Accept: application/json, text/event-stream"}
		p.body = RPC("initialize", map[string]any{"protocolVersion": legacyVersion, "capabilities": map[string]any{},
			"clientInfo": map[string]string{"name": "mcpblob-hardening", "version": "1"}})
	case V1:
		p.method, p.target = http.MethodPut, fmt.Sprintf("/v1/blobs/hard/hdr-%d", next())
		p.hdr, p.body = []string{auth, "Content-Type: text/plain"}, []byte("framing")
	case D:
		p.method, p.target = http.MethodGet, "/d/"+e.mintLink(ctx, BaseText, false)
	case U:
		p.method, p.target = http.MethodPut, "/u/"+e.MintUpload(ctx, "alice", map[string]any{})
		p.hdr, p.body = []string{"Content-Type: text/plain"}, []byte("framing")
	}
	return p
}

// headerAbuse sends every framing variant to /mcp, /v1, /d and /u, then
// the authentication and Expect: 100-continue variants.
func headerAbuse(ctx context.Context, e *Env) []Batch {
	var out []Batch
	for _, s := range []Surface{Legacy, V1, D, U} {
		var cs []Case
		for _, f := range framings {
			w := f.want
			if s == D && openOnD[f.label] {
				w = WantEither
			}
			cs = append(cs, Case{Name: f.label, Want: w, Stores: s == V1 || s == U,
				Send: func(ctx context.Context, e *Env) *wire.Answer { return e.sendRaw(ctx, f.mk(e.partsFor(ctx, s))) }})
		}
		cs = append(cs, authCases(s)...)
		if s == Legacy || s == V1 {
			cs = append(cs, pipelined(s))
		}
		out = append(out, Batch{"HTTP framing and headers", s, cs})
	}
	return out
}

// authCases: Authorization header variants (each carries the real key, so
// the log check sees whether a refused one is logged), and Expect:
// 100-continue before authentication or over the size limit.
func authCases(s Surface) []Case {
	variants := []struct {
		label string
		line  func(key string) []string
	}{
		{"Authorization: Bearer (no key)", func(string) []string { return []string{"Authorization: Bearer"} }},
		{"Authorization: Bearer, two spaces", func(k string) []string { return []string{"Authorization: Bearer  " + k} }},
		{"Authorization: bearer (lower case)", func(k string) []string { return []string{"Authorization: bearer " + k} }},
		{"Authorization: Basic", func(k string) []string { return []string{"Authorization: Basic " + k} }},
		{"Authorization: key with a suffix", func(k string) []string { return []string{"Authorization: Bearer " + k + "x"} }},
		{"two Authorization headers", func(k string) []string { return []string{"Authorization: Bearer " + k, "Authorization: Bearer wrong"} }},
	}
	var cs []Case
	for _, v := range variants {
		cs = append(cs, Case{Name: v.label, Want: WantEither, Stores: s == V1 || s == U, Send: func(ctx context.Context, e *Env) *wire.Answer {
			p := e.partsFor(ctx, s).noAuth()
			p.hdr = append(p.hdr, v.line(e.apiKeys["alice"])...)
			return e.sendRaw(ctx, p.plain())
		}})
	}
	return append(cs, expectCases(s)...)
}

// expectCases: a 1 GiB body announced with Expect: 100-continue must be
// refused before the server asks for it: without credentials (a forged
// /u token), and over --max-upload.
func expectCases(s Surface) []Case {
	mk := func(label string, auth bool) Case {
		return Case{Name: label, Want: WantReject, Send: func(ctx context.Context, e *Env) *wire.Answer {
			p := e.partsFor(ctx, s)
			if !auth {
				p = p.noAuth()
				if s == U {
					p.target = "/u/forged.token"
				}
			}
			return e.sendRaw(ctx, wire.Raw{Head: p.head(false, "Content-Length: 1073741824", "Expect: 100-continue"), Method: p.method, Expect: 1500 * time.Millisecond})
		}, Check: func(_ context.Context, _ *Env, a *wire.Answer) string {
			if len(a.Interim) > 0 {
				return fmt.Sprintf("the server sent %v before refusing", a.Interim)
			}
			return ""
		}}
	}
	cs := []Case{mk("Expect: 100-continue, 1 GiB, no credentials", false)}
	if s == V1 {
		cs = append(cs, mk("Expect: 100-continue, 1 GiB, over --max-upload", true))
	}
	return cs
}

// pipelined sends two requests on one connection: first one the server
// refuses while its body is still arriving (a body nested 100,000 deep on
// /mcp, a PUT with a bad Content-MD5 on /v1), then a plain request. The
// second answer must be the second request's: a server that answers early
// and then parses the rest of the first body as a request has lost the
// message boundary (request smuggling).
func pipelined(s Surface) Case {
	return Case{Name: "a second request pipelined after an early refusal", Want: WantEither, Send: func(ctx context.Context, e *Env) *wire.Answer {
		var first, second string
		switch s {
		case Legacy:
			body := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"x":` + nest("[", "]", 100000) + `}}`
			first = e.Head(http.MethodPost, "/mcp", "alice", len(body), "Content-Type: application/json", "Accept: application/json, text/event-stream") + body
			b2 := `{"jsonrpc":"2.0","id":"second","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`
			second = e.Head(http.MethodPost, "/mcp", "alice", len(b2), "Content-Type: application/json", "Accept: application/json, text/event-stream") + b2
		default:
			body := strings.Repeat("x", 256<<10)
			first = e.Head(http.MethodPut, fmt.Sprintf("/v1/blobs/hard/pipe-%d", next()), "alice", len(body), "Content-MD5: not-base64!") + body
			second = e.Head(http.MethodGet, "/v1/blobs/"+BaseText, "alice", -1)
		}
		first = strings.Replace(first, "Connection: close\r\n", "", 1)
		return e.sendPipelined(ctx, first, second)
	}, Check: func(_ context.Context, _ *Env, a *wire.Answer) string {
		if a.ClosedEarly {
			return "" // the server closed after its first answer: no desync possible
		}
		if s == Legacy && !strings.Contains(string(a.Body), `"second"`) {
			return "the second request got an answer that is not its own: " + a.String()
		}
		if s == V1 && len(a.Body) != BaseSize {
			return "the second request got an answer that is not its own: " + a.String()
		}
		return ""
	}}
}

// sendPipelined writes first and second back to back on one connection
// and returns the answer to the second, or the first when the server
// closed the connection after it.
func (e *Env) sendPipelined(ctx context.Context, first, second string) *wire.Answer {
	c, err := (&net.Dialer{Timeout: 3 * time.Second}).DialContext(ctx, "tcp", e.addr)
	if err != nil {
		return &wire.Answer{Err: err}
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(e.caseLimit))
	go io.WriteString(c, first+second)
	br := bufio.NewReader(c)
	a := wire.ReadFinal(br, &http.Request{Method: http.MethodPost})
	if a.Status == 0 {
		return a
	}
	if a.Header.Get("Connection") == "close" {
		a.ClosedEarly = true
		return a
	}
	return wire.ReadFinal(br, &http.Request{Method: http.MethodGet})
}
