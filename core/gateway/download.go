package gateway

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"

	"github.com/mcpblob/mcpblob/core/mcp/headers"
	"github.com/mcpblob/mcpblob/core/mcp/resstream"
	"github.com/mcpblob/mcpblob/core/token"
)

// ServeDownload serves GET /g/{tok}, a downloadUrl the gateway minted: it
// runs the upstream's resources/read for the link's URI, in the link's
// upstream session and era, with the gateway's own credential and the
// link's principal, and sends the decoded bytes raw as they arrive.
// Errors are the byte plane's JSON {"error":{"code","message"}}: 401 for a
// link that is not one, 410 once expired (call resources/stream again),
// 404 for a used single-use link or a resource the upstream does not
// have, 502/504 for the upstream's failures.
func (g *Gateway) ServeDownload(r *Request, tok string, w ResponseWriter) {
	if r.Method != http.MethodGet {
		w.AddHeader("Allow", "GET")
		apiError(w, http.StatusMethodNotAllowed, "method_not_allowed", "method not allowed; use GET")
		return
	}
	c, st, ok := g.verifyStream(w, tok)
	if !ok {
		return
	}
	if c.SingleUse {
		if err := g.opts.Redeem(orBackground(r.Context), c); err != nil {
			apiError(w, http.StatusNotFound, "not_found", "this single-use link was already used")
			return
		}
	}
	if g.serveCached(w, c) { // cache.go
		return
	}
	ctx, cancel := context.WithCancel(context.WithoutCancel(orBackground(r.Context)))
	epoch := g.cacheEpoch(c) // before the upstream is asked (cache.go)
	resp, ue := g.do(g.readRequest(ctx, c, st))
	if ue == nil {
		ue = checkRead(resp)
	}
	if ue != nil {
		if resp != nil {
			drainClose(resp.Body)
		}
		cancel()
		g.failDownload(w, ue)
		return
	}
	g.decodeRead(w, c, epoch, resp, cancel, r.Context)
}

// verifyStream checks a downloadUrl token; on refusal it answers.
func (g *Gateway) verifyStream(w ResponseWriter, tok string) (token.Claims, streamState, bool) {
	c, err := g.opts.Keyring.Verify(tok, PurposeStream)
	var st streamState
	switch {
	case errors.Is(err, token.ErrExpired):
		apiError(w, http.StatusGone, "expired", "this link has expired; call resources/stream again")
	case err != nil, c.Object == "", json.Unmarshal(c.Data, &st) != nil:
		apiError(w, http.StatusUnauthorized, "unauthorized", "invalid link")
	default:
		return c, st, true
	}
	return c, st, false
}

// readID is the JSON-RPC id of the gateway's own resources/read calls.
var readID = json.RawMessage("1")

// readRequest is the upstream resources/read of c's URI in st's session
// and era.
func (g *Gateway) readRequest(ctx context.Context, c token.Claims, st streamState) *http.Request {
	params := map[string]any{"uri": c.Object}
	if st.Modern {
		params["_meta"] = map[string]any{headers.MetaProtocolVersion: st.Version,
			headers.MetaClientCapabilities: map[string]any{}}
	}
	body := mustMarshal(map[string]any{"jsonrpc": "2.0", "id": readID, "method": methodRead, "params": params})
	req := g.newUpstreamRequest(ctx, http.MethodPost, nil, bytes.NewReader(body), int64(len(body)), c.Principal)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if st.Version != "" {
		req.Header.Set(headers.ProtocolVersion, st.Version)
	}
	if st.Session != "" {
		req.Header.Set(headers.SessionID, st.Session)
	}
	if st.Modern {
		req.Header.Set(headers.Method, methodRead)
		req.Header.Set(headers.Name, headerValue(c.Object))
	}
	return req
}

// headerValue is v as an Mcp-Name value: as it is when plain printable
// ASCII, else in the "=?base64?…?=" form (SEP-2243).
func headerValue(v string) string {
	plain := v != "" && v[0] != ' ' && v[len(v)-1] != ' '
	for i := 0; i < len(v) && plain; i++ {
		plain = v[i] >= 0x20 && v[i] < 0x7f
	}
	if plain && !bytes.HasPrefix([]byte(v), []byte("=?base64?")) {
		return v
	}
	return "=?base64?" + base64.StdEncoding.EncodeToString([]byte(v)) + "?="
}

// checkRead holds the upstream's answer to a resources/read: 200 with a
// JSON or SSE body.
func checkRead(resp *http.Response) *upstreamError {
	mt := mediaType(resp.Header.Get("Content-Type"))
	switch {
	case resp.StatusCode == http.StatusNotFound:
		return &upstreamError{kind: kindStatus, status: http.StatusNotFound,
			msg: "the upstream session of this link has ended; call resources/stream again"}
	case resp.StatusCode != http.StatusOK:
		return &upstreamError{kind: kindStatus, status: http.StatusBadGateway,
			msg: "the upstream answered resources/read with HTTP " + strconv.Itoa(resp.StatusCode)}
	case mt != "application/json" && mt != "text/event-stream":
		return &upstreamError{kind: kindNonMCP, status: http.StatusBadGateway,
			msg: "the upstream's answer is not MCP (Content-Type " + strconv.Quote(mt) + ")"}
	}
	return nil
}

// failDownload logs an upstream failure once and answers it on the byte
// plane.
func (g *Gateway) failDownload(w ResponseWriter, e *upstreamError) {
	if e.status != http.StatusNotFound {
		g.log.Warn("gateway: upstream failed", "kind", e.kind, "problem", e.msg, "method", methodRead, "upstream", g.Upstream())
	}
	code := "bad_gateway"
	switch e.status {
	case http.StatusGatewayTimeout:
		code = "gateway_timeout"
	case http.StatusNotFound:
		code = "not_found"
	}
	apiError(w, e.status, code, e.msg)
}

// apiError writes the byte plane's error body.
func apiError(w ResponseWriter, status int, code, msg string) {
	w.SetStatus(status)
	w.AddHeader("Content-Type", "application/json")
	w.AddHeader("Cache-Control", "no-store")
	w.SetBody(mustMarshal(map[string]any{"error": map[string]string{"code": code, "message": msg}}))
}

// decodeRead runs the Decoder over the upstream's answer on a goroutine
// that writes into a pipe. The status and headers wait for its first bytes
// (or its failure, answered as an error): a resource that cannot be
// decoded gets an error status, not a 200 cut short; a failure after the
// first bytes cuts the response. values are the request's, for
// Options.TraceDecode.
func (g *Gateway) decodeRead(w ResponseWriter, c token.Claims, epoch uint64, resp *http.Response, cancel context.CancelFunc, values context.Context) {
	pr, pw := io.Pipe()
	var mimeType syncString
	tee := g.newTee(c, epoch, mimeType.get) // cache.go: nil without a stream cache
	out, traced := g.traceDecode(values, tee.writer(pw))
	go func() {
		defer resp.Body.Close()
		fr, err := g.opts.Decoder(resp.Body, resp.Header.Get("Content-Type"), readID, out, mimeType.set)
		traced(err)
		tee.finish(fr, err)
		pw.CloseWithError(err)
	}()
	first := make([]byte, 32<<10)
	n, err := pr.Read(first)
	for n == 0 && err == nil { // an empty write
		n, err = pr.Read(first)
	}
	if err != nil && !errors.Is(err, io.EOF) {
		pr.CloseWithError(err)
		cancel()
		g.failDownload(w, decodeFailure(err))
		return
	}
	g.downloadHeaders(w, c, mimeType.get())
	w.SetBodyStream(-1, func(sw StreamWriter) error {
		defer cancel()
		defer pr.Close()
		return g.sendDecoded(sw, first[:n], pr, c.MaxSize)
	})
}

// traceDecode returns w counted, and the func that ends the decode's
// trace (Options.TraceDecode) with the count; w itself and a func that
// does nothing when it is not set.
func (g *Gateway) traceDecode(values context.Context, w io.Writer) (io.Writer, func(error)) {
	if g.opts.TraceDecode == nil {
		return w, func(error) {}
	}
	end := g.opts.TraceDecode(values)
	cw := &countingWriter{w: w}
	return cw, func(err error) { end(cw.n, err != nil) }
}

// countingWriter counts the bytes written through it.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// downloadHeaders are those of a direct resources/stream answer: the
// resource's media type (application/octet-stream when the upstream names
// none before the first bytes), its URI, no caching, and the bytes kept
// from scripting the gateway's origin.
func (g *Gateway) downloadHeaders(w ResponseWriter, c token.Claims, mt string) {
	if mt == "" {
		mt = "application/octet-stream"
	}
	w.SetStatus(http.StatusOK)
	w.AddHeader("Content-Type", mt)
	w.AddHeader("Cache-Control", "no-store")
	w.AddHeader("Content-Disposition", "attachment")
	w.AddHeader("Content-Security-Policy", "sandbox")
	if safeHeader(c.Object) {
		w.AddHeader(resstream.HeaderResourceURI, c.Object)
	}
}

func safeHeader(v string) bool {
	for i := 0; i < len(v); i++ {
		if v[i] < 0x20 || v[i] == 0x7f {
			return false
		}
	}
	return v != ""
}

// sendDecoded writes first, then the rest of the decoded bytes, failing
// past maxSize (the client's maxStreamSize; 0: none).
func (g *Gateway) sendDecoded(w StreamWriter, first []byte, rest io.Reader, maxSize int64) error {
	var sent int64
	write := func(p []byte) error {
		if sent += int64(len(p)); maxSize > 0 && sent > maxSize {
			return fmt.Errorf("%w (%d bytes)", resstream.ErrOverMaxStreamSize, maxSize)
		}
		_, err := w.Write(p)
		g.metrics.Relayed("decoded", int64(len(p)))
		return err
	}
	if err := write(first); err != nil {
		return err
	}
	bp := copyBuffers.Get().(*[]byte)
	defer copyBuffers.Put(bp)
	for {
		n, err := rest.Read(*bp)
		if n > 0 {
			if werr := write((*bp)[:n]); werr != nil {
				return werr
			}
		}
		switch {
		case errors.Is(err, io.EOF):
			return nil
		case err != nil:
			g.metrics.Upstream(kindBroken, 0)
			g.log.Warn("gateway: upstream resources/read could not be decoded", "kind", kindBroken, "upstream", g.Upstream())
			return err
		}
	}
}

// decodeFailure is the answer to a Decoder that failed before its first
// byte.
func decodeFailure(err error) *upstreamError {
	var re *ReadError
	if errors.As(err, &re) {
		status := http.StatusBadGateway
		if re.NotFound() {
			status = http.StatusNotFound
		}
		return &upstreamError{kind: kindStatus, status: status, msg: "the upstream answered resources/read with an error: " + re.Message}
	}
	return &upstreamError{kind: kindMalformed, status: http.StatusBadGateway,
		msg: "the upstream's resources/read answer is not a readable resource"}
}

// ReadError is the upstream's JSON-RPC error answer to resources/read, as
// a Decoder reports it.
type ReadError struct {
	Code    int
	Message string
}

func (e *ReadError) Error() string {
	return fmt.Sprintf("gateway: upstream resources/read error %d: %s", e.Code, e.Message)
}

// NotFound reports whether the error says the resource does not exist
// (-32002 in 2025-11-25, -32602 in 2026-07-28).
func (e *ReadError) NotFound() bool { return e.Code == -32002 || e.Code == -32602 }
