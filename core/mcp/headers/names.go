package headers

// Header names of the Streamable HTTP transport (SPEC.md §2).
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
