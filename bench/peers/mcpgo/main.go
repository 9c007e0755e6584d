// Command mcpgo is the benchmark peer built on github.com/mark3labs/mcp-go
// v1.2.1: every file of -dir is a blob resource blob:///{name} whose
// resources/read returns the whole file base64-encoded, and the upload_file
// tool takes a data URI string argument. It serves Streamable HTTP at /mcp
// with the library's defaults (which set no request body limit).
package main

import (
	"context"
	"encoding/base64"
	"fmt"
	"net"
	"net/http"
	"os"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcpblob/mcpblob/bench/peers/peerutil"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "peers/mcpgo:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	f, err := peerutil.Parse("mcpgo", args)
	if err != nil {
		return err
	}
	blobs, err := peerutil.Blobs(f.Dir)
	if err != nil {
		return err
	}
	s := server.NewMCPServer("bench-mcpgo", "1.0.0",
		server.WithResourceCapabilities(false, false), server.WithToolCapabilities(false))
	for key, path := range blobs {
		uri := "blob:///" + key
		s.AddResource(mcp.NewResource(uri, key, mcp.WithMIMEType("application/octet-stream")),
			func(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
				data, err := os.ReadFile(path)
				if err != nil {
					return nil, err
				}
				return []mcp.ResourceContents{mcp.BlobResourceContents{
					URI: uri, MIMEType: "application/octet-stream", Blob: base64.StdEncoding.EncodeToString(data),
				}}, nil
			})
	}
	s.AddTool(mcp.NewTool("upload_file", mcp.WithDescription("store a file given as a data URI"),
		mcp.WithString("file", mcp.Required()), mcp.WithString("filename"), mcp.WithString("key")),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			up, err := peerutil.SaveDataURI(f.Out, req.GetString("filename", ""), req.GetString("file", ""))
			if err != nil {
				return mcp.NewToolResultError(err.Error()), nil
			}
			return mcp.NewToolResultText(fmt.Sprintf(`{"size":%d,"sha256":%q}`, up.Size, up.SHA256)), nil
		})
	mux := http.NewServeMux()
	mux.Handle("/mcp", server.NewStreamableHTTPServer(s))
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	ln, err := net.Listen("tcp", f.Listen)
	if err != nil {
		return err
	}
	fmt.Printf("listening on %s\n", ln.Addr())
	return http.Serve(ln, mux)
}
