package mcp

import (
	"encoding/json"
	"strconv"

	"github.com/mcpblob/mcpblob/core/mcp/clientcaps"
	"github.com/mcpblob/mcpblob/core/mcp/jsonrpc"
)

// keptCapabilities is what a 2025-11-25 session keeps of the client's
// capabilities object raw for its life (nil when raw is not an object):
// the members the server reads (package clientcaps), or -32602 naming
// capabilities and the limit when even those take more than
// Limits.CapabilityBytes. A 2026-07-28 request carries its capabilities
// and the server keeps none.
func (s *Server) keptCapabilities(raw json.RawMessage) (json.RawMessage, *Error) {
	if len(raw) == 0 || raw[0] != '{' {
		return nil, nil
	}
	kept := clientcaps.Prune(raw)
	if limit := s.opts.Limits.CapabilityBytes; limit > 0 && int64(len(kept)) > limit {
		return nil, jsonrpc.NewError(CodeInvalidParams,
			"Invalid params: capabilities: the members this server reads take "+strconv.Itoa(len(kept))+
				" bytes; at most "+strconv.FormatInt(limit, 10)+" are kept",
			Object{"param": "capabilities", "limit": "capability_bytes", "max": limit})
	}
	return kept, nil
}
