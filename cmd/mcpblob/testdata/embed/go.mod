// Acceptance test of core/mcp's public registration API: a module of its own
// that sees only mcpblob's exported packages (core/mcp, core/server,
// storage/localfs), registers its own large-file tool and serves it.
// Run by `make test` (test-full): cd cmd/mcpblob/testdata/embed && go test ./...
module example.com/embed

go 1.26.0

require github.com/mcpblob/mcpblob v0.0.0

require (
	github.com/VictoriaMetrics/metrics v1.44.0 // indirect
	github.com/emmansun/base64 v0.9.0 // indirect
	github.com/klauspost/compress v1.20.0 // indirect
	github.com/klauspost/cpuid/v2 v2.4.2 // indirect
	github.com/molecule-man/go-brrr v1.0.1 // indirect
	github.com/valyala/bytebufferpool v1.0.0 // indirect
	github.com/valyala/fasthttp v1.74.0 // indirect
	github.com/valyala/fastrand v1.1.0 // indirect
	github.com/valyala/histogram v1.2.0 // indirect
	golang.org/x/sys v0.48.0 // indirect
)

replace github.com/mcpblob/mcpblob => ../../../..
