package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"

	"github.com/mcpblob/mcpblob/core/gateway/blobdecode"
	"github.com/mcpblob/mcpblob/core/gateway/offload"
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
	mt := mediaType(resp.Header.Get("Content-Type"))
	if resp.StatusCode != http.StatusOK || (mt != "application/json" && mt != "text/event-stream") {
		g.relayResponse(w, resp, cancel)
		return
	}
	// The uploads outlive the serving call (SSE bodies are written later):
	// their context ends with the answer.
	ctx, stop := context.WithCancel(context.Background())
	opts, stored := g.off.Rewrite(ctx, r.Principal)
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
func (g *Gateway) offloadJSON(w ResponseWriter, resp *http.Response, opts blobdecode.RewriteOptions, stored *offload.Stored, c call, done func()) {
	pr, pw := io.Pipe()
	go func() {
		_, err := blobdecode.Rewrite(resp.Body, pw, opts)
		if err != nil {
			stored.Remove()
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
	f := offload.Classify(err)
	if f == nil {
		return // the client went away
	}
	if f.Quota != nil {
		g.logQuota(f.Quota)
		writeRPCError(w, c.id, quotaError(f.Quota))
		return
	}
	e := offloadError(f)
	if e.kind == "" {
		g.log.Error("gateway: storing an offloaded blob failed", "err", err)
		writeRPCError(w, c.id, storeFailedError())
		return
	}
	g.metrics.Upstream(e.kind, 0)
	g.fail(w, c.id, c.method, e)
}

// offloadError is the error of a failed rewrite: the upstream's (502,
// answered), or the gateway's own (kind "": its store failed; its message
// is logged, the client gets storeFailedError or quotaError).
func offloadError(f *offload.Failure) *upstreamError {
	if f.Kind == "" {
		return &upstreamError{msg: f.Msg}
	}
	return &upstreamError{kind: f.Kind, status: http.StatusBadGateway, msg: f.Msg}
}

// storeFailedError is the answer to a tools/call whose offloaded blob the
// gateway's store failed to keep: -32603, saying nothing of the store
// (its error, with the object's key, goes to the log only).
func storeFailedError() *jsonrpc.Error {
	return jsonrpc.NewError(jsonrpc.CodeInternalError, "Internal error: storing an offloaded blob failed", nil)
}

// quotaError is the answer to a tools/call whose offloaded blob the store
// refused by the caller's quota: the client's limit, not the gateway's
// fault, so -32602 (HTTP 200) with data.reason "quotaExceeded" and the
// figures, as docs/gateway.md says.
func quotaError(q *offload.Quota) *jsonrpc.Error {
	return jsonrpc.NewError(jsonrpc.CodeInvalidParams,
		"Quota exceeded: "+q.Detail()+"; a blob of the tool's answer over the offload threshold could not be stored",
		map[string]any{"reason": "quotaExceeded", "quota": q.Name, "limit": q.Limit, "usage": q.Usage, "fits": q.Fits})
}

// logQuota logs an offload refused by a quota, at INFO: the client's limit.
func (g *Gateway) logQuota(q *offload.Quota) {
	g.log.Info("gateway: an offloaded blob is past the caller's quota; answered quotaExceeded", "quota", q.Name,
		"limit", q.Limit, "usage", q.Usage)
}

// errorEvent is the SSE event answering id with e.
func errorEvent(id json.RawMessage, e *jsonrpc.Error) []byte {
	b := append([]byte("event: message\ndata: "), jsonrpc.EncodeError(id, e)...)
	return append(b, "\n\n"...)
}
