package auth

import "strings"

// ResourceMetadata is the RFC 9728 protected resource metadata document.
type ResourceMetadata struct {
	Resource               string   `json:"resource"`
	AuthorizationServers   []string `json:"authorization_servers,omitempty"`
	ScopesSupported        []string `json:"scopes_supported"`
	BearerMethodsSupported []string `json:"bearer_methods_supported"`
	ResourceName           string   `json:"resource_name,omitempty"`
	ResourceDocumentation  string   `json:"resource_documentation,omitempty"`
}

// Well-known paths of the protected resource metadata (RFC 9728 §3): the
// root one and the one for the MCP endpoint's path, both served.
const (
	MetadataPath    = "/.well-known/oauth-protected-resource"
	MetadataPathMCP = MetadataPath + "/mcp"
)

// NewResourceMetadata returns the document for the MCP endpoint of the
// server at publicURL, protected by the authorization server issuer ("" on
// an API-key-only server).
func NewResourceMetadata(publicURL, issuer string) ResourceMetadata {
	m := ResourceMetadata{Resource: CanonicalResource(publicURL), ScopesSupported: AllScopes,
		BearerMethodsSupported: []string{"header"}, ResourceName: "mcpblob"}
	if issuer != "" {
		m.AuthorizationServers = []string{issuer}
	}
	return m
}

// CanonicalResource is the canonical URI of the MCP endpoint (RFC 8707):
// publicURL + "/mcp", the default audience of access tokens.
func CanonicalResource(publicURL string) string {
	return strings.TrimSuffix(publicURL, "/") + "/mcp"
}

// MetadataURL is the URL of the protected resource metadata that
// challenges name.
func MetadataURL(publicURL string) string {
	return strings.TrimSuffix(publicURL, "/") + MetadataPathMCP
}
