package auth

// MCPScope is the scope an MCP request of method needs, or "" when any
// authenticated caller may make it (initialize, ping, the lists of tools
// and prompts, notifications, its own tasks). For tools/call, readOnly
// says whether the tool is annotated read-only: those need blobs:read,
// every other tool blobs:write.
func MCPScope(method string, readOnly bool) string {
	switch method {
	case "tools/call":
		if readOnly {
			return ScopeRead
		}
		return ScopeWrite
	case "resources/list", "resources/read", "resources/templates/list", "resources/subscribe",
		"resources/unsubscribe", "resources/stream", "subscriptions/listen", "completion/complete":
		return ScopeRead
	case "files/authorizeUpload", "files/prepareUpload", "files/completeUpload":
		return ScopeWrite
	case "files/authorizeDownload", "files/getDownload", "files/getUpload":
		return ScopeRead
	}
	return ""
}
