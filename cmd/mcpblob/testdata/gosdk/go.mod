// Programs on the official MCP Go SDK, built by cmd/mcpblob's end-to-end
// tests: the interop client (.), the gateway tests' go-sdk upstream server
// (upstream/) and their go-sdk survey client (survey/). A module of its own so
// the SDK never enters mcpblob's module graph.
module github.com/mcpblob/mcpblob/cmd/mcpblob/testdata/gosdk

go 1.25.0

require github.com/modelcontextprotocol/go-sdk v1.8.0

require (
	github.com/google/jsonschema-go v0.4.3 // indirect
	github.com/segmentio/asm v1.1.3 // indirect
	github.com/segmentio/encoding v0.5.4 // indirect
	github.com/yosida95/uritemplate/v3 v3.0.2 // indirect
	golang.org/x/oauth2 v0.35.0 // indirect
	golang.org/x/sync v0.20.0 // indirect
	golang.org/x/sys v0.41.0 // indirect
	golang.org/x/time v0.15.0 // indirect
)
