package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"

	"github.com/mcpblob/mcpblob/core/gateway/blobdecode"
	"github.com/mcpblob/mcpblob/core/mcp/jsonrpc"
)

// offloadAnswer relays the upstream's answer to a tools/call or
// resources/read with its large blobs offloaded (blobdecode.Rewrite). The
// rewritten answer is held up to MaxRewriteBytes, so that an upstream
// whose blob turns out broken gets the client a clean JSON-RPC error and
// leaves nothing stored; past that bound it streams, and a failure then
// cuts the response. Any other answer (an error status, another type) is
// relayed as it is.
func (g *Gateway) offloadAnswer(r *Request, w ResponseWriter, resp *http.Response, cancel context.CancelFunc, c call) {
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if resp.StatusCode != http.StatusOK || (mt != "application/json" && mt != "text/event-stream") {
		g.relayResponse(w, resp, cancel)
		return
	}
	// The uploads outlive the serving call (SSE bodies are written later):
	// their context ends with the answer.
	ctx, stop := context.WithCancel(context.Background())
	opts, stored := g.off.rewriteOptions(ctx, r.Principal)
	done := func() {
		resp.Body.Close()
		cancel()
		stop()
	}
	if mt == "text/event-stream" {
		setHeaders(w, resp)
		w.SetBodyStream(-1, func(sw StreamWriter) error {
			defer done()
			if err := openStream(sw, resp); err != nil {
				return err
			}
			return g.offloadSSE(sw, resp.Body, opts, stored, c.id)
		})
		return
	}
	g.offloadJSON(w, resp, opts, stored, c, done)
}

// offloadJSON rewrites a JSON answer on another goroutine, through a pipe
// read here up to MaxRewriteBytes.
func (g *Gateway) offloadJSON(w ResponseWriter, resp *http.Response, opts blobdecode.RewriteOptions, stored *offloaded, c call, done func()) {
	pr, pw := io.Pipe()
	go func() {
		_, err := blobdecode.Rewrite(resp.Body, pw, opts)
		if err != nil {
			stored.remove()
		}
		done()
		pw.CloseWithError(err)
	}()
	head := make([]byte, 0, 32<<10)
	head, err := readUpTo(pr, head, int(g.opts.MaxRewriteBytes))
	switch {
	case errors.Is(err, io.EOF):
		setHeaders(w, resp)
		g.metrics.Relayed("to_client", int64(len(head)))
		w.SetBody(head)
	case err != nil:
		pr.CloseWithError(err)
		g.offloadFailed(w, c, err)
	default:
		setHeaders(w, resp)
		w.SetBodyStream(-1, func(sw StreamWriter) error {
			defer pr.Close()
			return g.copyBody(sw, pr, head, false)
		})
	}
}

// readUpTo appends r's bytes to b until r ends (io.EOF), fails, or b holds
// max bytes (nil error: more may follow).
func readUpTo(r io.Reader, b []byte, max int) ([]byte, error) {
	for len(b) < max {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := r.Read(b[len(b):min(cap(b), max)])
		b = b[:len(b)+n]
		if err != nil {
			return b, err
		}
	}
	return b, nil
}

// offloadFailed answers a rewrite that failed before any byte went out.
func (g *Gateway) offloadFailed(w ResponseWriter, c call, err error) {
	e := offloadError(err)
	if e == nil {
		return // the client went away
	}
	if e.kind == "" {
		g.log.Error("gateway: storing an offloaded blob failed", "err", err)
		writeRPCError(w, c.id, jsonrpc.NewError(jsonrpc.CodeInternalError, "Internal error: storing an offloaded blob failed", nil))
		return
	}
	g.metrics.Upstream(e.kind, 0)
	g.fail(w, c.id, c.method, e)
}

// offloadError is the error answered for a failed rewrite: the upstream's
// (a blob that is not base64, a body that ends early or is not JSON-RPC),
// the gateway's own (kind "": its store failed), or nil for a client that
// went away.
func offloadError(err error) *upstreamError {
	var sink *blobdecode.SinkError
	var wr *blobdecode.WriteError
	switch {
	case errors.As(err, &sink):
		return &upstreamError{msg: sink.Error()}
	case errors.As(err, &wr):
		return nil
	case errors.Is(err, blobdecode.ErrTruncated):
		return &upstreamError{kind: kindBroken, status: http.StatusBadGateway, msg: "its answer ended early"}
	}
	var corrupt *blobdecode.CorruptError
	if errors.As(err, &corrupt) {
		return &upstreamError{kind: kindMalformed, status: http.StatusBadGateway, msg: "an embedded blob of its answer is not base64"}
	}
	return &upstreamError{kind: kindMalformed, status: http.StatusBadGateway, msg: "its answer could not be read: " + err.Error()}
}

// errorEvent is the SSE event answering id with e.
func errorEvent(id json.RawMessage, e *jsonrpc.Error) []byte {
	b := append([]byte("event: message\ndata: "), jsonrpc.EncodeError(id, e)...)
	return append(b, "\n\n"...)
}
