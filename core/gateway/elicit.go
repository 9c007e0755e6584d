package gateway

import (
	"bytes"
	"context"
	"io"
	"net/http"

	"github.com/mcpblob/mcpblob/core/gateway/fileargs"
	"github.com/mcpblob/mcpblob/core/mcp/headers"
	"github.com/mcpblob/mcpblob/core/mcp/jsonrpc"
	"github.com/mcpblob/mcpblob/core/token"
)

// PurposeElicit is the token purpose of an elicitation carrier: the
// sealed record of an upstream's form request with x-mcp-file fields
// (fileargs, elicit*.go; docs/gateway.md, "File inputs").
const PurposeElicit = "gateway-elicit"

func (g *Gateway) carriers(principal string) fileargs.Carriers {
	return fileargs.Carriers{Seal: func(orig, data []byte) (string, error) {
		return g.opts.Keyring.Seal(token.Claims{Purpose: PurposeElicit, Principal: principal, Object: string(orig), Data: data})
	}, Open: func(tok string) ([]byte, []byte, bool) {
		c, err := g.opts.Keyring.Verify(tok, PurposeElicit)
		return []byte(c.Object), c.Data, err == nil && c.Principal == principal
	}}
}

// elicitGate is body in through the walk of the elicitation answer it may
// be, and the gate (nil when it cannot be one).
func (g *Gateway) elicitGate(r *Request, c call, in io.Reader) (io.Reader, *fileargs.ElicitGate) {
	form, ok := fileargs.AnswerForm(r.Header.Get(headers.Method) != "", c.method)
	if !ok || in == nil {
		return in, nil
	}
	eg := fileargs.NewElicitGate(in, r.ContentLength, form, g.carriers(r.Principal), fileargs.MetricsOf(g.metrics))
	return eg, eg
}

// refuseElicit answers a refused file: a retry gets -32602 for its id; a
// 2025-11-25 response is not accepted (400, no id), and the upstream gets
// the error response an SDK client sends for content its schema refuses.
func (g *Gateway) refuseElicit(w ResponseWriter, r *Request, c call, eg *fileargs.ElicitGate, resp *http.Response, cancel context.CancelFunc) {
	if resp != nil {
		drainClose(resp.Body)
	}
	cancel()
	e := jsonrpc.NewError(jsonrpc.CodeInvalidParams, "Invalid params: "+eg.Refused().Error(), eg.Refused().Data())
	if id := eg.Original(); id != nil {
		body := jsonrpc.EncodeError(id, e)
		if resp, ue := g.do(g.newUpstreamRequest(context.Background(), http.MethodPost, r.Header, bytes.NewReader(body), int64(len(body)), r.Principal)); ue == nil {
			drainClose(resp.Body)
		}
		c.id, e = nil, e.WithStatus(http.StatusBadRequest)
	}
	writeRPCError(w, c.id, e)
}
