package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcpblob/mcpblob/core/gateway/fileargs"
	"github.com/mcpblob/mcpblob/core/gateway/readahead"
	"github.com/mcpblob/mcpblob/core/gateway/wire"
	"github.com/mcpblob/mcpblob/core/mcp/headers"
	"github.com/mcpblob/mcpblob/core/mcp/jsonrpc"
)

// Methods the gateway acts on; every other one is relayed as it is.
const (
	methodInitialize = "initialize"
	methodDiscover   = "server/discover"
	methodStream     = "resources/stream"
	methodRead       = "resources/read"
)

// ServeMCP relays one request to the MCP endpoint to the upstream and its
// answer back, as both arrive.
func (g *Gateway) ServeMCP(r *Request, w ResponseWriter) {
	switch r.Method {
	case http.MethodPost:
		g.post(r, w)
	case http.MethodGet, http.MethodDelete:
		g.relay(r, w, call{method: r.Method})
	default:
		w.AddHeader("Allow", "GET, POST, DELETE")
		writeRPCError(w, nil, jsonrpc.NewError(jsonrpc.CodeInvalidRequest, "Method Not Allowed", nil).
			WithStatus(http.StatusMethodNotAllowed))
	}
}

// call is what the gateway knows of the JSON-RPC message a request carries.
type call struct {
	method string          // the JSON-RPC method ("" unknown), or the HTTP method of a GET or DELETE
	id     json.RawMessage // nil when unknown or a notification
	head   []byte          // the body bytes already read
	whole  bool            // head is the whole body
}

// post finds the JSON-RPC method and id of a POST (a bounded look at the
// body; the Mcp-Method header when the body's start does not name it),
// reads the body whole for the few methods the gateway acts on, and
// relays the rest untouched.
func (g *Gateway) post(r *Request, w ResponseWriter) {
	c := call{}
	c.method, _ = headers.Decode(r.Header.Get(headers.Method))
	if r.Body != nil { // a bounded look, for the method (when no header names it) and the id of error answers
		var err error
		if c.head, c.whole, err = g.peek(r.Body, r.ContentLength); err != nil {
			bodyFailed(w, nil) // the transport may answer otherwise (the rate rule's 408)
			return
		}
		m, id, _ := wire.PeekMessage(c.head)
		c.id = id
		if c.method == "" || m != "" {
			c.method = m // the body's method is the one the upstream serves
		}
	}
	if actsOn(c.method) && !c.whole {
		if !g.readWhole(r, w, &c) {
			return
		}
	}
	if g.ownOffloaded(r, w, &c) { // offload_read.go
		return
	}
	switch c.method {
	case methodInitialize, methodDiscover:
		g.capability(r, w, c)
		return
	case methodToolsList:
		if g.opts.Files.Opener != nil {
			g.toolsList(r, w, c) // fileargs_modes.go
			return
		}
	case methodStream:
		if g.streams.Load() != streamsOffered {
			g.ownStream(r, w, c)
			return
		}
	}
	g.relay(r, w, c)
}

// actsOn reports whether the gateway reads a request of method whole.
func actsOn(method string) bool {
	return method == methodInitialize || method == methodDiscover || method == methodStream
}

// peek reads the start of body: until the top-level method is seen, the
// body ends, or PeekBytes are read. whole reports the body ended (or n,
// its declared length, was read).
func (g *Gateway) peek(body io.Reader, n int64) (head []byte, whole bool, err error) {
	size := int64(g.opts.PeekBytes)
	if n >= 0 && n < size {
		size = n + 1 // room to see the end
	}
	head = make([]byte, 0, max(size, 512))
	for len(head) < cap(head) {
		k, err := body.Read(head[len(head):cap(head)])
		head = head[:len(head)+k]
		switch {
		case errors.Is(err, io.EOF):
			return head, true, nil
		case err != nil:
			return head, false, err
		case n >= 0 && int64(len(head)) >= n:
			// Its declared length is in: whole, though the reader has not
			// said io.EOF yet (a bytes.Reader says it on the next read).
			return head, true, nil
		}
		if m, id, complete := wire.PeekMessage(head); complete || (m != "" && id != nil && !actsOn(m)) {
			break
		}
	}
	return head, false, nil
}

// readWhole reads the rest of a body the gateway acts on, up to
// MaxSmallBody (413 beyond).
func (g *Gateway) readWhole(r *Request, w ResponseWriter, c *call) bool {
	limit := g.opts.MaxSmallBody
	rest, err := io.ReadAll(io.LimitReader(r.Body, limit-int64(len(c.head))+1))
	if err != nil {
		bodyFailed(w, c.id)
		return false
	}
	c.head = append(c.head, rest...)
	if int64(len(c.head)) > limit {
		tooLarge(w, c.id, "a "+c.method+" request is limited to "+strconv.FormatInt(limit, 10)+" bytes")
		return false
	}
	c.whole = true
	return true
}

// relay sends the request to the upstream, its body streamed as the
// client sends it, and relays the answer.
func (g *Gateway) relay(r *Request, w ResponseWriter, c call) {
	resp, cancel, ok := g.send(r, w, c)
	if !ok {
		return
	}
	inBuffer, waited := answerInBuffer(r, resp) // before any read
	if modern := r.Header.Get(headers.Method) != ""; fileargs.MayAsk(modern, c.method) {
		resp.Body, resp.ContentLength = fileargs.MarkAnswer(resp.Body, resp.ContentLength, mediaType(resp.Header.Get("Content-Type")),
			modern, g.carriers(r.Principal), g.opts.MaxRewriteBytes) // elicit.go
	}
	// The stream cache's watches: resources/updated (cache_watch.go) and
	// the versions answers show (cache_fresh.go).
	resp.Body = g.watchUpdates(r.Principal, resp)
	resp.Body = g.watchVersions(r.Principal, c.method, resp)
	if g.offloads(c.method) { // offload_answer.go
		g.offloadAnswer(r, w, resp, cancel, c)
		return
	}
	g.relayAnswer(w, resp, cancel, inBuffer, waited)
}

// answerInBuffer reports whether the transport holds the whole of the
// answer already (h1's InBuffer), so that it can be read on the serving
// goroutine with no wait to time. An SSE answer to a POST whose end is not
// in yet is waited for up to firstEventWait (h1's WaitEnd; waited): go-sdk's
// server ends its one event's answer in a write of its own, just after.
func answerInBuffer(r *Request, resp *http.Response) (inBuffer, waited bool) {
	b, ok := resp.Body.(interface {
		InBuffer() bool
		WaitEnd(time.Duration) bool
	})
	switch {
	case !ok:
		return false, false
	case b.InBuffer():
		return true, false
	case r.Method != http.MethodPost || resp.ContentLength >= 0 ||
		!strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream"):
		return false, false
	}
	return b.WaitEnd(firstEventWait), true
}

// callContext is the context of an upstream call and what ends it. A
// call that nothing ends before its answer does (no body, or one held
// whole that goes as it is) has Background, which the transport need not
// watch (no context.AfterFunc per request): its answer's end, or closing
// its body, ends it. A GET stream (ended by Close), a body that streams, a
// tools/call (its file gate) or an answer to an elicitation (its gate) may
// be cut before.
func (g *Gateway) callContext(r *Request, c call) (context.Context, context.CancelFunc) {
	_, form := fileargs.AnswerForm(r.Header.Get(headers.Method) != "", c.method)
	switch {
	case r.Method == http.MethodGet:
		return context.WithCancel(g.longLived)
	case r.Body != nil && (!c.whole || form || c.method == methodToolsCall):
		return context.WithCancel(context.Background())
	}
	return context.Background(), func() {}
}

// send sends the request to the upstream and checks the answer is MCP. On
// failure it has answered and reports !ok; else cancel ends the upstream
// call and must be called once the answer is done with.
func (g *Gateway) send(r *Request, w ResponseWriter, c call) (*http.Response, context.CancelFunc, bool) {
	ctx, cancel := g.callContext(r, c)
	var body *clientBody
	n := int64(-1)
	if r.Body != nil && r.Method == http.MethodPost {
		var rest io.Reader = r.Body
		n = r.ContentLength
		if c.whole {
			rest, n = nil, int64(len(c.head))
		}
		body = &clientBody{head: c.head, rest: rest, size: n, metrics: g.metrics}
	}
	var in io.Reader
	var gate *fileargs.Gate
	ids := &fileargs.IDScan{} // a request's id after its params (TypeScript SDKs): found for a refusal's answer
	if body != nil {
		in = ids.Wrap(body, c.id == nil && c.method != "")
		if c.method == methodToolsCall {
			gate = g.newFileGate(ctx, r, in) // fileargs.go
			in = gate
			if g.deliverByReference(ctx, gate, r.Principal) { // fileargs_ref.go: the body changes length
				n = -1
			}
		}
	}
	in, egate := g.elicitGate(r, c, in) // elicit.go
	if body != nil && in == io.Reader(body) && body.rest == nil {
		in = body.inMemory() // read whole: its headers and body go upstream in one write
	}
	req := g.newUpstreamRequest(ctx, r.Method, r.Header, in, n, r.Principal)
	if c.method == methodInitialize || c.method == methodDiscover {
		req.Header.Del("Accept-Encoding") // the gateway reads this answer: not compressed
	}
	resp, ue := g.sendTraced(r, req, gate)
	if body != nil {
		body.detach() // from here the transport never reads the client's body
	}
	gate.Stop()
	egate.Stop()
	if ref := gate.Refused(); ref != nil {
		c.id = ids.Find(c.id, body.head, body.rest)
		g.discardKept(gate, ref)
		refuseFile(w, c, ref, resp, cancel)
		return nil, nil, false
	}
	if egate.Refused() != nil {
		c.id = ids.Find(c.id, body.head, body.rest)
		g.refuseElicit(w, r, c, egate, resp, cancel)
		return nil, nil, false
	}
	if ue != nil && body != nil && body.failed() {
		// The client's body broke (bad chunked framing, gone, too slow):
		// the client's fault, not the upstream's.
		cancel()
		bodyFailed(w, c.id)
		return nil, nil, false
	}
	if ue == nil {
		ue = checkAnswer(r.Method, c.method, resp)
	}
	if ue == nil && body != nil && resp.StatusCode == http.StatusRequestEntityTooLarge {
		ue, resp = bodyRefused(body, resp), nil // bodylimit.go
	}
	if ue != nil {
		if resp != nil {
			drainClose(resp.Body)
		}
		cancel()
		g.discardKept(gate, nil)
		g.fail(w, c.id, c.method, ue)
		return nil, nil, false
	}
	return resp, cancel, true
}

func orBackground(ctx context.Context) context.Context {
	if ctx == nil {
		return context.Background()
	}
	return ctx
}

// checkAnswer holds the upstream's answer to what an MCP endpoint may send:
// a JSON-RPC body (application/json) or an SSE stream for a POST and a
// GET; anything for a resources/stream (SEP-2532 answers raw bytes, or a
// redirect to them), a DELETE, or a bodiless status; a redirect is never
// followed nor relayed for other methods. 5xx without a JSON body is the upstream's
// failure; 4xx passes as the upstream sent it (404 for an ended session
// makes the client start a new one).
func checkAnswer(httpMethod, method string, resp *http.Response) *upstreamError {
	mt := mediaType(resp.Header.Get("Content-Type"))
	mcpType := mt == "application/json" || mt == "text/event-stream"
	empty := resp.ContentLength == 0 || resp.StatusCode == http.StatusNoContent || resp.StatusCode == http.StatusAccepted
	switch {
	case resp.StatusCode >= 300 && resp.StatusCode < 400 && method != methodStream:
		return &upstreamError{kind: kindNonMCP, status: http.StatusBadGateway,
			msg: "the upstream answered a redirect (HTTP " + strconv.Itoa(resp.StatusCode) + "), which the gateway does not follow"}
	case mcpType || httpMethod == http.MethodDelete || method == methodStream:
		return nil
	case resp.StatusCode >= 500:
		return &upstreamError{kind: kindStatus, status: http.StatusBadGateway,
			msg: "the upstream answered HTTP " + strconv.Itoa(resp.StatusCode)}
	case resp.StatusCode >= 300 || empty:
		return nil
	}
	return &upstreamError{kind: kindNonMCP, status: http.StatusBadGateway,
		msg: "the upstream's answer is not MCP (Content-Type " + strconv.Quote(mt) + ")"}
}

// relayResponse sends the upstream's status, headers and body as they
// arrive: JSON with its length, SSE with its headers at once (openStream),
// or with the first bytes when they come within firstEventWait (with the
// answer's length when the answer ends there: a POST's answer of one
// event, as go-sdk's server sends), and flushed at every read (each event as soon as it is whole on the
// wire), with keep-alive comments while the upstream is silent
// (keepalive.go).
func (g *Gateway) relayResponse(w ResponseWriter, resp *http.Response, cancel context.CancelFunc) {
	g.relayAnswer(w, resp, cancel, false, false)
}

// relayAnswer is relayResponse; inBuffer says the transport holds the
// whole answer already (answerInBuffer): an SSE answer is then read on
// this goroutine (readahead.Start), with no reader goroutine and no wait. waited
// says firstEventWait was spent already waiting for the answer's end: it
// is not waited for again.
func (g *Gateway) relayAnswer(w ResponseWriter, resp *http.Response, cancel context.CancelFunc, inBuffer, waited bool) {
	setHeaders(w, resp)
	if resp.ContentLength == 0 || resp.StatusCode == http.StatusNoContent || resp.StatusCode == http.StatusNotModified {
		resp.Body.Close()
		cancel()
		return
	}
	if inBuffer {
		g.relayWhole(w, resp, cancel)
		return
	}
	mt := mediaType(resp.Header.Get("Content-Type"))
	if mt != "text/event-stream" {
		w.SetBodyStream(resp.ContentLength, func(sw StreamWriter) error {
			defer cancel()
			defer resp.Body.Close()
			return g.copyBody(sw, resp.Body, nil, false)
		})
		return
	}
	rd := readahead.Start(resp.Body, inBuffer, &copyBuffers)
	size := resp.ContentLength
	ready := size < 0 && (rd.First != nil || rd.WaitFirst(firstEventWait))
	switch {
	case ready && rd.Whole(wholeWait(waited)):
		size = int64(rd.First.N) // known: headers and body in one write, no chunked end
	case ready:
		if h, ok := w.(HeadersWithFirstBytes); ok {
			h.HeadersWithFirstBytes()
		}
	}
	w.SetBodyStream(size, func(sw StreamWriter) error {
		defer cancel()
		defer resp.Body.Close()
		if !ready {
			if err := openStream(sw, resp); err != nil {
				rd.End()
				return err
			}
		}
		return g.copySSE(sw, rd)
	})
}

// wholeMax bounds an answer relayWhole holds: the transport's buffer holds
// less.
const wholeMax = 64 << 10

// wholeBuffers are relayWhole's buffers, for a ResponseWriter that copies
// the body it is given (BodyCopier).
var wholeBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 16<<10); return &b }}

// relayWhole relays an answer the transport holds whole (answerInBuffer),
// JSON or SSE: read here, from memory, and sent as one body of known
// length (headers and body in one write), without a reader goroutine, a
// wait or a streamed body; through a pooled buffer when w copies it. An
// answer that fails as it is read (or is over wholeMax) is relayed as far
// as it came, then cut, as a streamed one is.
func (g *Gateway) relayWhole(w ResponseWriter, resp *http.Response, cancel context.CancelFunc) {
	bc, copies := w.(BodyCopier)
	var bp *[]byte
	var buf []byte
	if copies {
		bp = wholeBuffers.Get().(*[]byte)
		buf = (*bp)[:0]
	} else {
		buf = make([]byte, 0, 8<<10) // most answers are smaller
	}
	b, err := readUpTo(resp.Body, buf, wholeMax)
	if !errors.Is(err, io.EOF) {
		w.SetBodyStream(-1, func(sw StreamWriter) error {
			defer cancel()
			defer resp.Body.Close()
			defer putWhole(bp, b)
			return g.copyBody(sw, resp.Body, b, false)
		})
		return
	}
	resp.Body.Close()
	cancel()
	g.metrics.Relayed("to_client", int64(len(b)))
	if copies {
		bc.SetBodyCopy(b)
		putWhole(bp, b)
		return
	}
	w.SetBody(b)
}

// putWhole gives a relayWhole buffer back (nil bp: none was taken), as b
// grew it.
func putWhole(bp *[]byte, b []byte) {
	if bp != nil && cap(b) <= wholeMax {
		*bp = b[:0]
		wholeBuffers.Put(bp)
	}
}

// copyBuffers are the buffers answers are relayed through.
var copyBuffers = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// copyBody copies prefix, then body, to w: flushed after every read when
// flush. A failure of the upstream midway is logged once; the transport
// then cuts the response (a client must not take it for whole).
func (g *Gateway) copyBody(w StreamWriter, body io.Reader, prefix []byte, flush bool) error {
	if len(prefix) > 0 {
		if _, err := w.Write(prefix); err != nil {
			return err
		}
		g.metrics.Relayed("to_client", int64(len(prefix)))
		if err := w.Flush(); err != nil {
			return err
		}
	}
	bp := copyBuffers.Get().(*[]byte)
	defer copyBuffers.Put(bp)
	buf := *bp
	for {
		n, rerr := body.Read(buf)
		if n > 0 {
			if _, err := w.Write(buf[:n]); err != nil {
				return err // the client went away: the deferred cancel ends the upstream call
			}
			g.metrics.Relayed("to_client", int64(n))
			if flush {
				if err := w.Flush(); err != nil {
					return err
				}
			}
		}
		if rerr != nil {
			return g.readEnd(rerr)
		}
	}
}

// clientBody is the request body sent upstream: the bytes already read,
// then the rest of the client's body. detach stops the transport reading
// it, so the client's body (owned by the server transport) is never read
// after the serving call returns. A body of known size that was sent whole
// ends with io.EOF after detach: net/http reads once more past the
// Content-Length to check for extra bytes, and a failure of that read
// closes the connection, cutting the upstream's answer.
type clientBody struct {
	head     []byte
	rest     io.Reader
	size     int64 // the declared length, -1 unknown
	sent     int64
	metrics  Metrics
	mu       sync.Mutex
	detached bool
	readErr  bool // reading the client's body failed
}

// failed reports whether reading the client's body failed.
func (b *clientBody) failed() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.readErr
}

var errDetached = errors.New("gateway: request body no longer available")

func (b *clientBody) Read(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case b.detached && b.size >= 0 && b.sent >= b.size:
		return 0, io.EOF
	case b.detached:
		return 0, errDetached
	}
	if len(b.head) > 0 {
		n := copy(p, b.head)
		b.head = b.head[n:]
		b.sent += int64(n)
		b.metrics.Relayed("to_upstream", int64(n))
		return n, nil
	}
	if b.rest == nil {
		return 0, io.EOF
	}
	n, err := b.rest.Read(p)
	if err != nil && !errors.Is(err, io.EOF) {
		b.readErr = true
	}
	b.sent += int64(n)
	b.metrics.Relayed("to_upstream", int64(n))
	return n, err
}

// inMemory returns a body read whole (rest nil) as a *bytes.Reader, which
// net/http sends with its headers in one write (any other reader has the
// headers flushed first, a write of their own). Its bytes count as relayed
// at once.
func (b *clientBody) inMemory() io.Reader {
	b.mu.Lock()
	defer b.mu.Unlock()
	head := b.head
	b.head, b.sent = nil, b.sent+int64(len(head))
	b.metrics.Relayed("to_upstream", int64(len(head)))
	return bytes.NewReader(head)
}

func (b *clientBody) detach() {
	b.mu.Lock()
	b.detached = true
	b.mu.Unlock()
}

// mediaType is the media type of an answer's Content-Type (wire.MediaType).
func mediaType(contentType string) string { return wire.MediaType(contentType) }
