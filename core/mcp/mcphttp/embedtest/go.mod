// A module of its own that serves an x-mcp-file tool with only mcpblob's
// protocol core (core/mcp and core/mcp/mcphttp) and calls it with the
// official Go SDK and TypeScript SDK (v1 and v2) clients. The SDKs are test
// dependencies: they never enter mcpblob's module graph.
// Run by `make test` (test-full): cd core/mcp/mcphttp/embedtest && go test ./...
module example.com/mcphttpembed

go 1.26.0

require (
	github.com/mcpblob/mcpblob v0.0.0
	github.com/modelcontextprotocol/go-sdk v1.8.0
)

require (
	github.com/emmansun/base64 v0.9.0 // indirect
	github.com/google/jsonschema-go v0.4.3 // indirect
	github.com/klauspost/cpuid/v2 v2.4.2 // indirect
	github.com/segmentio/asm v1.1.3 // indirect
	github.com/segmentio/encoding v0.5.4 // indirect
	github.com/yosida95/uritemplate/v3 v3.0.2 // indirect
	golang.org/x/oauth2 v0.35.0 // indirect
	golang.org/x/sync v0.20.0 // indirect
	golang.org/x/sys v0.48.0 // indirect
	golang.org/x/time v0.15.0 // indirect
)

replace github.com/mcpblob/mcpblob => ../../../..
