package headers

import "strings"

// Header names of the Streamable HTTP transport (docs/protocol.md).
const (
	SessionID       = "Mcp-Session-Id"
	ProtocolVersion = "MCP-Protocol-Version"
	Method          = "Mcp-Method"
	Name            = "Mcp-Name"
	ParamPrefix     = "Mcp-Param-"
)

// Getter looks up a request header case-insensitively; "" means absent.
type Getter interface {
	Get(name string) string
}

// Has reports whether h has a non-empty header name, without a copy of its
// value (a session id) when h can tell (it has a Has method).
func Has(h Getter, name string) bool {
	if hh, ok := h.(interface{ Has(name string) bool }); ok {
		return hh.Has(name)
	}
	return h.Get(name) != ""
}

// Accept is what a request's Accept header admits: JSON responses, SSE
// streams or both.
type Accept struct{ JSON, SSE bool }

// ParseAccept reads an Accept header; an empty one admits both.
func ParseAccept(v string) Accept {
	if strings.TrimSpace(v) == "" {
		return Accept{JSON: true, SSE: true}
	}
	var a Accept
	for part := range strings.SplitSeq(v, ",") {
		mt, _, _ := strings.Cut(part, ";")
		switch strings.ToLower(strings.TrimSpace(mt)) {
		case "application/json", "application/*":
			a.JSON = true
		case "text/event-stream", "text/*":
			a.SSE = true
		case "*/*":
			a.JSON, a.SSE = true, true
		}
	}
	return a
}
