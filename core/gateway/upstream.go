package gateway

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/mcpblob/mcpblob/core/gateway/fileargs"
	"github.com/mcpblob/mcpblob/core/gateway/h1"
	"github.com/mcpblob/mcpblob/core/gateway/principal"
)

// What crosses to the upstream: the client's headers but for those that
// belong to the hop (RFC 9110 §7.6.1) or to the gateway itself — the
// client's credential (never forwarded: MCP security best practices), its
// cookies, Host, Origin (checked by the gateway; the upstream sees the
// gateway as its client) and any principal header the client made up.
// The gateway adds its own credential and the principal it authenticated.

// dropRequest are the client headers never sent upstream.
var dropRequest = headerSet("Connection", "Keep-Alive", "Proxy-Authenticate", "Proxy-Authorization",
	"Proxy-Connection", "Te", "Trailer", "Transfer-Encoding", "Upgrade", "Authorization", "Cookie", "Host",
	"Origin", "Content-Length", "Expect", principal.Header)

// dropResponse are the upstream headers never sent to the client.
var dropResponse = headerSet("Connection", "Keep-Alive", "Proxy-Authenticate", "Proxy-Connection", "Te",
	"Trailer", "Transfer-Encoding", "Upgrade", "Content-Length")

func headerSet(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[http.CanonicalHeaderKey(n)] = true
	}
	return m
}

// copyHeader copies src into dst (which holds none of its names) but for
// the names in drop and those src's Connection header lists. The values
// are src's own slices, capped: an Add to dst copies them first.
func copyHeader(dst, src http.Header, drop map[string]bool) {
	eachHeader(src, drop, func(name string, values []string) { dst[name] = values[:len(values):len(values)] })
}

// eachHeader calls f with every header of src but for the names in drop
// and those src's Connection header lists.
func eachHeader(src http.Header, drop map[string]bool, f func(name string, values []string)) {
	var listed map[string]bool
	for _, v := range src.Values("Connection") {
		for v != "" {
			var name string
			name, v, _ = strings.Cut(v, ",")
			if ck := connectionToken(strings.TrimSpace(name)); ck != "" && !drop[ck] {
				if listed == nil {
					listed = map[string]bool{}
				}
				listed[ck] = true
			}
		}
	}
	for k, vs := range src {
		ck := http.CanonicalHeaderKey(k)
		if !drop[ck] && !listed[ck] {
			f(ck, vs)
		}
	}
}

// connectionToken is the header name a Connection header's token names:
// its canonical form, without an allocation for keep-alive and close,
// which every kept-alive answer may carry.
func connectionToken(name string) string {
	switch {
	case strings.EqualFold(name, "keep-alive"):
		return "Keep-Alive"
	case strings.EqualFold(name, "close"):
		return "Close"
	}
	return http.CanonicalHeaderKey(name)
}

// smallHeader bounds the size an upstream request's header map is made
// for: a map made for up to 8 names keeps them in one group, one made for
// more allocates a table besides (two allocations more; 888 bytes against
// 496 for six names). A client's usual headers fit once the hop's, Host,
// Content-Length and its credential are dropped; a map that needs more
// grows.
const smallHeader = 8

// newUpstreamRequest builds the upstream request of method with body (nil
// for none, length n or -1) on behalf of principal, carrying the client's
// headers in (nil for none) and the gateway's credential.
func (g *Gateway) newUpstreamRequest(ctx context.Context, method string, in http.Header, body io.Reader, n int64, who string) *http.Request {
	req := (&http.Request{Method: method, URL: g.upstream, Host: g.upstream.Host, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: make(http.Header, min(len(in)+2, smallHeader))}).WithContext(ctx)
	if in != nil {
		copyHeader(req.Header, in, dropRequest)
	}
	if body != nil {
		req.Body, req.ContentLength = io.NopCloser(body), n // -1: unknown, sent chunked
		if br, ok := body.(*bytes.Reader); ok {             // in memory: sent with the headers, and again on a retry
			held := *br
			req.GetBody = func() (io.ReadCloser, error) { r := held; return io.NopCloser(&r), nil }
		}
	}
	if g.opts.Token != "" {
		req.Header.Set("Authorization", "Bearer "+g.opts.Token)
	}
	switch g.opts.PrincipalMode {
	case PrincipalSigned:
		req.Header.Set(principal.Header, principal.Sign(g.opts.PrincipalKey, who, time.Now().Add(g.opts.PrincipalTTL)))
	case PrincipalPlain:
		req.Header.Set(principal.Header, principal.Plain(who))
	}
	return req
}

// sendTraced is doUnlessRefused (fileargs_expand.go), told to
// Options.TraceUpstream when it is set.
func (g *Gateway) sendTraced(r *Request, req *http.Request, gate *fileargs.Gate) (*http.Response, *upstreamError) {
	if g.opts.TraceUpstream == nil {
		return g.doUnlessRefused(req, gate)
	}
	end := g.opts.TraceUpstream(r.Context, req.Header)
	resp, ue := g.doUnlessRefused(req, gate)
	outcome := "ok"
	if ue != nil {
		outcome = ue.kind
	}
	end(outcome)
	return resp, ue
}

// do sends req and classifies what went wrong: the upstream's response,
// or an *upstreamError. It records the call's latency.
func (g *Gateway) do(req *http.Request) (*http.Response, *upstreamError) {
	start := time.Now()
	resp, err := g.roundTrip(req)
	if err != nil {
		ue := classify(err)
		g.metrics.Upstream(ue.kind, time.Since(start))
		return nil, ue
	}
	if ue := credentialRefused(resp); ue != nil {
		drainClose(resp.Body)
		g.metrics.Upstream(ue.kind, time.Since(start))
		return nil, ue
	}
	g.metrics.Upstream("ok", time.Since(start))
	return resp, nil
}

// credentialRefused is the error for an upstream that refused the
// gateway's own credential: its challenge must not reach the client, who
// would take it for the gateway's.
func credentialRefused(resp *http.Response) *upstreamError {
	if resp.StatusCode != http.StatusUnauthorized && resp.StatusCode != http.StatusForbidden {
		return nil
	}
	return &upstreamError{kind: kindCredential, status: http.StatusBadGateway,
		msg: "the upstream refused the gateway's credential (HTTP " + http.StatusText(resp.StatusCode) + ")"}
}

// classify names the failure of a call that got no response.
func classify(err error) *upstreamError {
	var ne net.Error
	var op *net.OpError
	switch {
	case errors.As(err, &op) && op.Op == "dial":
		return &upstreamError{kind: kindUnreachable, status: http.StatusBadGateway, msg: "the upstream is unreachable"}
	case errors.As(err, &ne) && ne.Timeout(), errors.Is(err, context.DeadlineExceeded):
		return &upstreamError{kind: kindTimeout, status: http.StatusGatewayTimeout, msg: "the upstream did not answer in time"}
	case strings.Contains(err.Error(), "response headers exceeded"):
		return &upstreamError{kind: kindOverBounds, status: http.StatusBadGateway, msg: "the upstream's response headers are over the gateway's limit"}
	case errors.Is(err, h1.ErrMalformed), strings.Contains(err.Error(), "malformed HTTP"):
		return &upstreamError{kind: kindMalformed, status: http.StatusBadGateway, msg: "the upstream's answer is not HTTP"}
	case errors.Is(err, context.Canceled):
		return &upstreamError{kind: kindCanceled, status: http.StatusBadGateway, msg: "the request was canceled"}
	}
	return &upstreamError{kind: kindUnreachable, status: http.StatusBadGateway, msg: "the upstream is unreachable"}
}

// drainClose reads a little of body, so its connection may be reused, and
// closes it.
func drainClose(body io.ReadCloser) {
	_, _ = io.CopyN(io.Discard, body, 4<<10)
	body.Close()
}
