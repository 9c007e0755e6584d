package scan

// The methods, member names and paths of the requests a busy endpoint answers most
// (resources/read, tools/list, tools/call and their _meta), spelled once:
// a key or path found here costs the scan no allocation.

// knownKey returns the constant equal to the member name b, or "" when b
// is not one of the common names.
func knownKey(b []byte) string {
	switch string(b) { // compiled to comparisons: no conversion is made
	case "jsonrpc":
		return "jsonrpc"
	case "id":
		return "id"
	case "method":
		return "method"
	case "params":
		return "params"
	case "uri":
		return "uri"
	case "name":
		return "name"
	case "arguments":
		return "arguments"
	case "cursor":
		return "cursor"
	case "_meta":
		return "_meta"
	case "progressToken":
		return "progressToken"
	case "key":
		return "key"
	case metaProtocol:
		return metaProtocol
	case metaCapabilities:
		return metaCapabilities
	case metaClientInfo:
		return metaClientInfo
	case "version":
		return "version"
	}
	return ""
}

// knownMethod returns the constant equal to the method b, or "" when b is
// not one of the common methods.
func knownMethod(b []byte) string {
	switch string(b) {
	case "resources/read":
		return "resources/read"
	case "tools/list":
		return "tools/list"
	case "tools/call":
		return "tools/call"
	case "resources/list":
		return "resources/list"
	case "resources/templates/list":
		return "resources/templates/list"
	case "initialize":
		return "initialize"
	case "notifications/initialized":
		return "notifications/initialized"
	case "ping":
		return "ping"
	}
	return ""
}

// The _meta members a 2026-07-28 request carries on every call.
const (
	metaProtocol     = "io.modelcontextprotocol/protocolVersion"
	metaCapabilities = "io.modelcontextprotocol/clientCapabilities"
	metaClientInfo   = "io.modelcontextprotocol/clientInfo"
)

// memberPath is the path of member key of the object at path:
// path + "/" + PathElem(key), a constant for the common places.
func memberPath(path, key string) string {
	switch path {
	case "":
		switch key {
		case "jsonrpc":
			return "/jsonrpc"
		case "id":
			return "/id"
		case "method":
			return "/method"
		case "params":
			return "/params"
		}
	case "/params":
		switch key {
		case "uri":
			return "/params/uri"
		case "name":
			return "/params/name"
		case "arguments":
			return "/params/arguments"
		case "cursor":
			return "/params/cursor"
		case "_meta":
			return "/params/_meta"
		}
	case "/params/_meta":
		switch key {
		case "progressToken":
			return "/params/_meta/progressToken"
		case metaProtocol:
			return "/params/_meta/io.modelcontextprotocol~1protocolVersion"
		case metaCapabilities:
			return "/params/_meta/io.modelcontextprotocol~1clientCapabilities"
		case metaClientInfo:
			return "/params/_meta/io.modelcontextprotocol~1clientInfo"
		}
	}
	return path + "/" + PathElem(key)
}
