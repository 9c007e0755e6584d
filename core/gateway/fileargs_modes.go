package gateway

import (
	"bytes"
	"encoding/json"
	"net/http"

	"github.com/mcpblob/mcpblob/core/gateway/fileargs"
	"github.com/mcpblob/mcpblob/core/gateway/wire"
	"github.com/mcpblob/mcpblob/core/mcp/jsonrpc"
)

// methodToolsList is the method whose answer advertises the upload
// transfer mode when the gateway expands file URIs (fileargs_expand.go).
const methodToolsList = "tools/list"

// toolsList relays a tools/list, the x-mcp-file arguments of its answer
// advertising transferModes ["inline","upload"] where the upstream takes
// only inline data (fileargs.AdvertiseUpload); the answer is read within
// MaxRewriteBytes, as an initialize's: a JSON answer over it is relayed
// unchanged, an SSE one failed.
func (g *Gateway) toolsList(r *Request, w ResponseWriter, c call) {
	if !c.whole && !g.readWhole(r, w, &c) {
		return
	}
	if c.id == nil {
		_, c.id, _ = wire.PeekMessage(c.head)
	}
	resp, cancel, ok := g.send(r, w, c)
	if !ok {
		return
	}
	g.relayEdited(r, w, resp, cancel, c, advertiseUpload, true)
}

// advertiseUpload is the JSON-RPC message b with its result's file
// arguments advertising the upload mode, when b answers id (found).
// A message naming no x-mcp-file (most upstreams' lists) is only checked
// and its id looked at, not decoded.
func advertiseUpload(b []byte, id json.RawMessage) (out []byte, found bool, ue *upstreamError) {
	if !bytes.Contains(b, []byte(`"x-mcp-file"`)) && json.Valid(b) {
		if _, got, complete := wire.PeekMessage(b); complete {
			return b, jsonrpc.IDKey(got) == jsonrpc.IDKey(id), nil
		}
	}
	var msg map[string]json.RawMessage
	if json.Unmarshal(b, &msg) != nil {
		return nil, false, notJSONRPC()
	}
	if jsonrpc.IDKey(msg["id"]) != jsonrpc.IDKey(id) {
		return b, false, nil
	}
	result, changed := fileargs.AdvertiseUpload(msg["result"])
	if !changed {
		return b, true, nil
	}
	msg["result"] = result
	return mustMarshal(msg), true, nil
}

func notJSONRPC() *upstreamError {
	return &upstreamError{kind: kindMalformed, status: http.StatusBadGateway,
		msg: "the upstream's answer is not a JSON-RPC message"}
}
