// Command fasthttpfile is P6's floor for the fixed front end: a plain
// valyala/fasthttp server (the library mcpblob serves with, configured as
// mcpblob configures it) answering GET /{name} with the file -dir/{name},
// opened and read per request like nginx without open_file_cache. No MCP,
// no JSON, no base64, no session, no log line: what is left is what any
// server on this front end pays per small read, and bench/compare sets
// mcpblob's and nginx's CPU per request beside it.
package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/valyala/fasthttp"

	"github.com/mcpblob/mcpblob/bench/peers/peerutil"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "peers/fasthttpfile:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	f, err := peerutil.Parse("fasthttpfile", args)
	if err != nil {
		return err
	}
	root, err := os.OpenRoot(f.Dir)
	if err != nil {
		return err
	}
	srv := &fasthttp.Server{
		Handler:           func(ctx *fasthttp.RequestCtx) { serveFile(ctx, root) },
		WriteBufferSize:   16 << 10, // as core/server's newFastHTTP
		StreamRequestBody: true,
		ReduceMemoryUsage: true,
	}
	return srv.ListenAndServe(f.Listen)
}

// serveFile answers /readyz, and GET /{name} with the bytes of name under
// root (404 when absent).
func serveFile(ctx *fasthttp.RequestCtx, root *os.Root) {
	name := strings.TrimPrefix(string(ctx.Path()), "/")
	if name == "readyz" {
		return
	}
	if !ctx.IsGet() {
		ctx.Error("method not allowed", fasthttp.StatusMethodNotAllowed)
		return
	}
	b, err := root.ReadFile(name)
	if err != nil {
		ctx.Error("not found", fasthttp.StatusNotFound)
		return
	}
	ctx.SetContentType("application/octet-stream")
	ctx.SetBody(b)
}
