package gateway

import (
	"encoding/json"
	"net/http"

	"github.com/mcpblob/mcpblob/core/mcp/jsonrpc"
)

// Kinds of upstream failure (the outcome label of the upstream metrics).
const (
	kindUnreachable = "unreachable"
	kindTimeout     = "timeout"
	kindCredential  = "credential"
	kindStatus      = "status"
	kindNonMCP      = "non_mcp"
	kindMalformed   = "malformed"
	kindOverBounds  = "over_bounds"
	kindBroken      = "broken"
	kindCanceled    = "canceled"
)

// upstreamError is a failure of the upstream, answered to the client as a
// JSON-RPC error (-32603, data.upstream naming the kind) with status (502,
// or 504 for a timeout).
type upstreamError struct {
	kind   string
	status int
	msg    string
}

func (e *upstreamError) Error() string { return "gateway: upstream: " + e.msg }

// rpcError is e as the JSON-RPC error object the client reads.
func (e *upstreamError) rpcError() *jsonrpc.Error {
	return jsonrpc.NewError(jsonrpc.CodeInternalError, "Upstream error: "+e.msg,
		map[string]any{"upstream": e.kind}).WithStatus(e.status)
}

// writeRPCError answers e as a JSON-RPC error for the request id (nil:
// unknown, omitted).
func writeRPCError(w ResponseWriter, id json.RawMessage, e *jsonrpc.Error) {
	w.SetStatus(e.HTTPStatus())
	for k, v := range e.Header {
		w.AddHeader(k, v)
	}
	w.AddHeader("Content-Type", "application/json")
	w.SetBody(jsonrpc.EncodeError(id, e))
}

// fail logs an upstream failure once and answers it.
func (g *Gateway) fail(w ResponseWriter, id json.RawMessage, method string, e *upstreamError) {
	level := g.log.Warn
	if e.kind == kindCredential {
		level = g.log.Error
	}
	if e.kind != kindCanceled {
		level("gateway: upstream failed", "kind", e.kind, "problem", e.msg, "method", method, "upstream", g.Upstream())
	}
	writeRPCError(w, id, e.rpcError())
}

// badRequest answers a client's malformed request.
func badRequest(w ResponseWriter, id json.RawMessage, why string) {
	writeRPCError(w, id, jsonrpc.BadRequest(why))
}

// bodyFailed answers a request whose body could not be read (bad chunked
// framing, a client gone or too slow) as core/mcp does: -32700, 400.
func bodyFailed(w ResponseWriter, id json.RawMessage) {
	writeRPCError(w, id, jsonrpc.NewError(jsonrpc.CodeParseError, "Parse error: reading body failed", nil).
		WithStatus(http.StatusBadRequest))
}

// tooLarge answers a body over a bound the gateway reads whole.
func tooLarge(w ResponseWriter, id json.RawMessage, what string) {
	writeRPCError(w, id, jsonrpc.NewError(jsonrpc.CodeInvalidRequest, "Request body too large: "+what, nil).
		WithStatus(http.StatusRequestEntityTooLarge))
}
