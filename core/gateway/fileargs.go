package gateway

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/mcpblob/mcpblob/core/gateway/fileargs"
	"github.com/mcpblob/mcpblob/core/gateway/offload"
	"github.com/mcpblob/mcpblob/core/mcp/headers"
	"github.com/mcpblob/mcpblob/core/mcp/jsonrpc"
)

// File inputs (docs/gateway.md, "File inputs"). A tools/call body streams
// to the upstream through a fileargs.Gate: each chunk is
// checked by package fileargs before it is forwarded, the string of every argument the
// upstream's tools/list marks x-mcp-file decoded as a data URI while it
// passes, only to count its bytes and sniff its type. A file over
// maxSize, or not matching accept, stops the body there: the chunk that
// showed it, and everything after, never reach the upstream, whose request
// is cut, and the client gets -32602 naming the argument. Good bytes pass
// unchanged, except the files an upstream takes by reference
// (fileargs_ref.go).
//
// Which arguments are files comes from the upstream's own tools/list,
// fetched by the gateway when a call names a tool it has no fresh entry
// for (FileSpecTTL), in the caller's session and era. So every node
// behind a load balancer checks the same arguments whatever it relayed
// before, at the cost of one tools/list per tool and TTL per node.

// maxToolPages bounds the tools/list pages fetched for the tool table.
const maxToolPages = 16

// listQuery is what the gateway's own tools/list needs of the call that
// caused it: its session, era and principal.
type listQuery struct {
	session, version, principal string
	modern                      bool
}

// fileSpecsFor returns the file arguments of tool, from the table
// (fileargs.Table) or a tools/list of the upstream. When the upstream
// cannot list its tools, nil: the call passes unchecked (the upstream
// still checks).
func (g *Gateway) fileSpecsFor(ctx context.Context, q listQuery, tool string) map[string]fileargs.Spec {
	specs, err := g.files.Specs(ctx, tool, g.opts.FileSpecTTL, func() (map[string]map[string]fileargs.Spec, error) {
		return g.listToolFiles(ctx, q)
	})
	if err != nil && !errors.Is(err, context.Canceled) {
		g.log.Warn("gateway: upstream tools/list failed; file arguments pass unchecked", "problem", err.Error(),
			"upstream", g.Upstream())
	}
	return specs
}

// newFileGate returns the gate of a tools/call body src, the upstream
// call's context ctx.
func (g *Gateway) newFileGate(ctx context.Context, r *Request, src io.Reader) *fileargs.Gate {
	q := listQuery{session: r.Header.Get(headers.SessionID), version: r.Header.Get(headers.ProtocolVersion),
		principal: r.Principal, modern: r.Header.Get(headers.Method) != ""}
	name, _ := headers.Decode(r.Header.Get(headers.Name))
	lookup := func(tool string) map[string]fileargs.Spec { return g.fileSpecsFor(ctx, q, tool) }
	return fileargs.NewGate(src, name, lookup, fileargs.MetricsOf(g.metrics))
}

// refuseFile answers the client the file refusal (-32602 naming the
// argument; HTTP 200, so an SDK client reports its message); the
// upstream's answer to a request it never got whole, if any, is dropped.
func refuseFile(w ResponseWriter, c call, ref *fileargs.Refusal, resp *http.Response, cancel context.CancelFunc) {
	if resp != nil {
		drainClose(resp.Body)
	}
	cancel()
	data := map[string]any{"argument": ref.Arg}
	if q := offload.QuotaOf(ref.Cause); ref.Failed && q != nil {
		writeRPCError(w, c.id, fileQuotaError(ref.Arg, q))
		return
	}
	if ref.Failed {
		writeRPCError(w, c.id, jsonrpc.NewError(jsonrpc.CodeInternalError, "Internal error: "+ref.Error(), data).
			WithStatus(http.StatusInternalServerError))
		return
	}
	if ref.Limit > 0 {
		data["maxSize"] = ref.Limit
	}
	if ref.Reason != "" {
		data["reason"] = ref.Reason
	}
	writeRPCError(w, c.id, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "Invalid params: "+ref.Error(), data))
}

// fileQuotaError answers a file delivered by reference that the store
// refused by the caller's quota: -32602 naming the argument, with
// data.reason "quotaExceeded" and the figures, as an offload's
// (quotaError).
func fileQuotaError(arg string, q *offload.Quota) *jsonrpc.Error {
	return jsonrpc.NewError(jsonrpc.CodeInvalidParams,
		fmt.Sprintf("Invalid params: Argument %q: quota exceeded: %s; nothing was stored", arg, q.Detail()),
		map[string]any{"argument": arg, "reason": "quotaExceeded", "quota": q.Name, "limit": q.Limit, "usage": q.Usage, "fits": q.Fits})
}
