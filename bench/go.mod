// The benchmark module: side-by-side comparisons against peer MCP servers,
// nginx and the raw limits, and the k6 load-test runner. A module of its own
// so the peers (the official go-sdk, mark3labs/mcp-go) never enter mcpblob's
// module graph.
module github.com/mcpblob/mcpblob/bench

go 1.26.0

replace github.com/mcpblob/mcpblob => ../

require (
	github.com/emmansun/base64 v0.9.0
	github.com/klauspost/cpuid/v2 v2.4.2
	github.com/mark3labs/mcp-go v1.2.1
	github.com/mcpblob/mcpblob v0.0.0
	github.com/modelcontextprotocol/go-sdk v1.8.0
)

require (
	github.com/google/jsonschema-go v0.4.3 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.2 // indirect
	github.com/segmentio/asm v1.1.3 // indirect
	github.com/segmentio/encoding v0.5.4 // indirect
	github.com/spf13/cast v1.7.1 // indirect
	github.com/yosida95/uritemplate/v3 v3.0.2 // indirect
	golang.org/x/oauth2 v0.35.0 // indirect
	golang.org/x/sync v0.23.0 // indirect
	golang.org/x/sys v0.48.0 // indirect
	golang.org/x/text v0.42.0 // indirect
	golang.org/x/time v0.15.0 // indirect
)
