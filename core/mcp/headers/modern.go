package headers

import (
	"encoding/json"
	"net/http"

	"github.com/mcpblob/mcpblob/core/mcp/jsonrpc"
)

// _meta keys every 2026-07-28 request carries.
const (
	MetaProtocolVersion    = "io.modelcontextprotocol/protocolVersion"
	MetaClientCapabilities = "io.modelcontextprotocol/clientCapabilities"
)

// CheckModern reads the protocol version and client capabilities of a
// 2026-07-28 request's params._meta, and checks MCP-Protocol-Version,
// Mcp-Method and Mcp-Name against the body (docs/protocol.md, "2026-07-28:
// stateless requests"); supported lists the versions served.
func CheckModern(h Getter, msg *jsonrpc.Message, supported []string) (string, json.RawMessage, *jsonrpc.Error) {
	ver, caps, e := modernMeta(msg)
	if e != nil {
		return "", nil, e
	}
	if hv, ok := Decode(h.Get(ProtocolVersion)); !ok || hv != ver {
		return "", nil, Mismatch("MCP-Protocol-Version does not match _meta " + MetaProtocolVersion)
	}
	if !contains(supported, ver) {
		return "", nil, jsonrpc.NewError(jsonrpc.CodeUnsupportedVersion, "Unsupported protocol version", map[string]any{
			"supported": supported, "requested": ver,
		}).WithStatus(http.StatusBadRequest)
	}
	if e := CheckMethod(h, msg.Method); e != nil {
		return "", nil, e
	}
	return ver, caps, CheckNameParam(h, msg.Method, msg.ParamFields)
}

func contains(list []string, v string) bool {
	for _, s := range list {
		if s == v {
			return true
		}
	}
	return false
}

// modernMeta reads the protocol version and client capabilities of
// params._meta.
func modernMeta(msg *jsonrpc.Message) (string, json.RawMessage, *jsonrpc.Error) {
	var ver string
	verRaw, hasVer := msg.Meta[MetaProtocolVersion]
	if hasVer && json.Unmarshal(verRaw, &ver) != nil {
		hasVer = false
	}
	caps, hasCaps := msg.Meta[MetaClientCapabilities]
	if hasCaps && (len(caps) == 0 || caps[0] != '{') {
		hasCaps = false
	}
	bad := func(why string) *jsonrpc.Error {
		return jsonrpc.NewError(jsonrpc.CodeInvalidParams, "Invalid params: "+why, nil).WithStatus(http.StatusBadRequest)
	}
	switch {
	case msg.Meta == nil:
		return "", nil, bad("params._meta is required")
	case !hasVer || ver == "":
		return "", nil, bad("_meta is missing " + MetaProtocolVersion)
	case !hasCaps:
		return "", nil, bad("_meta is missing " + MetaClientCapabilities)
	}
	return ver, caps, nil
}
