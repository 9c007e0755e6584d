// Package oauthtest starts the test authorization server
// (cmd/mcpblob-testas, a real OAuth 2.1 server on zitadel/oidc) for tests
// and plays its user: Start runs it as a process on 127.0.0.1:0, Login
// drives its login page over plain HTTP, Token runs a whole authorization
// code + PKCE flow, Mint and Rotate call its /test/ endpoints.
//
// The package uses the standard library only; the server and its
// dependencies stay in their own module. Start runs the binary named by
// $MCPBLOB_TESTAS, or else <repo root>/.tools/bin/mcpblob-testas, and fails
// the test when it is missing. Build it with
//
//	cd cmd/mcpblob-testas && GOBIN=$(TOOLBIN) go install .
//
// (make tools). The server's flags, endpoints, token claims and login steps
// are documented in cmd/mcpblob-testas.
package oauthtest
