// Package login is mcpblob's own OAuth 2.1 client, with which a browser
// page (the URL-mode upload page, docs/auth.md) signs its user in at the
// authorization server that issues the MCP access tokens: the
// authorization URL (code flow, PKCE S256, the RFC 8707 resource), and the
// code exchange, whose access token is verified like any bearer before it
// says who signed in. Core/server keeps the cookies and the pages.
package login
