// Command gosdkup is the upstream of the gateway targets (G1–G3): an MCP
// server on the official MCP Go SDK (github.com/modelcontextprotocol/go-sdk
// v1.8.0) written as an SDK user would write it, put behind
// `mcpblob serve --upstream`. Every file of -dir is a blob resource
// blob:///{name} whose resources/read returns the whole file base64-encoded
// (as bench/peers/gosdk), and the tool image {key} returns the file key as
// one image content (image/png), base64 in the JSON result as the SDK
// writes it. Streamable HTTP at /mcp with the SDK's defaults; /readyz.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpblob/mcpblob/bench/peers/peerutil"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "peers/gosdkup:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	f, err := peerutil.Parse("gosdkup", args)
	if err != nil {
		return err
	}
	blobs, err := peerutil.Blobs(f.Dir)
	if err != nil {
		return err
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: "bench-gosdkup", Version: "1.0.0"}, nil)
	for key, path := range blobs {
		uri := "blob:///" + key
		srv.AddResource(&mcp.Resource{URI: uri, Name: key, MIMEType: "application/octet-stream"},
			func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
				data, err := os.ReadFile(path)
				if err != nil {
					return nil, err
				}
				return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{
					{URI: uri, MIMEType: "application/octet-stream", Blob: data}}}, nil
			})
	}
	srv.AddTool(&mcp.Tool{Name: "image", Description: "returns the file key of -dir as an image",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"key":{"type":"string"}},"required":["key"]}`)},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var in struct{ Key string }
			if err := json.Unmarshal(req.Params.Arguments, &in); err != nil {
				return nil, err
			}
			data, err := os.ReadFile(filepath.Join(f.Dir, filepath.Base(in.Key)))
			if err != nil {
				return nil, err
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.ImageContent{Data: data, MIMEType: "image/png"}}}, nil
		})
	mux := http.NewServeMux()
	mux.Handle("/mcp", mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	ln, err := net.Listen("tcp", f.Listen)
	if err != nil {
		return err
	}
	fmt.Printf("listening on %s\n", ln.Addr())
	return http.Serve(ln, mux)
}
