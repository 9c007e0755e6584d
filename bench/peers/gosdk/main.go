// Command gosdk is the benchmark peer built on the official MCP Go SDK
// (github.com/modelcontextprotocol/go-sdk v1.8.0): every file of -dir is a
// blob resource blob:///{name} whose resources/read returns the whole file
// base64-encoded, the upload_file tool takes a data URI string argument, and
// the image tool {key} returns the file key of -dir as one image content
// (image/png, base64 in the JSON result as the SDK writes it: the upstream
// of the gateway targets G1–G3). It serves Streamable HTTP at /mcp with the
// SDK's defaults, except that the request body limit is lifted so large
// data URIs are accepted.
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

type uploadIn struct {
	File     string `json:"file" jsonschema:"the file as an RFC 2397 base64 data URI"`
	Filename string `json:"filename,omitempty"`
	Key      string `json:"key,omitempty"`
}

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "peers/gosdk:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	f, err := peerutil.Parse("gosdk", args)
	if err != nil {
		return err
	}
	blobs, err := peerutil.Blobs(f.Dir)
	if err != nil {
		return err
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: "bench-gosdk", Version: "1.0.0"}, nil)
	for key, path := range blobs {
		uri := "blob:///" + key
		srv.AddResource(&mcp.Resource{URI: uri, Name: key, MIMEType: "application/octet-stream"},
			func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
				data, err := os.ReadFile(path)
				if err != nil {
					return nil, err
				}
				return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{
					{URI: uri, MIMEType: "application/octet-stream", Blob: data},
				}}, nil
			})
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "upload_file", Description: "store a file given as a data URI"},
		func(ctx context.Context, req *mcp.CallToolRequest, in uploadIn) (*mcp.CallToolResult, peerutil.Upload, error) {
			up, err := peerutil.SaveDataURI(f.Out, in.Filename, in.File)
			return nil, up, err
		})
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
	handler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
		&mcp.StreamableHTTPOptions{MaxRequestBodyBytes: -1})
	mux := http.NewServeMux()
	mux.Handle("/mcp", handler)
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	ln, err := net.Listen("tcp", f.Listen)
	if err != nil {
		return err
	}
	fmt.Printf("listening on %s\n", ln.Addr())
	return http.Serve(ln, mux)
}
