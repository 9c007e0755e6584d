// Command embedtest is a large-file MCP server built on mcpblob's protocol
// core alone: core/mcp for the protocol and core/mcp/mcphttp for net/http,
// no store and no blob tools. Its one tool, hash_file, takes an x-mcp-file
// argument of up to 2 GiB, decoded while it arrives, and answers with the
// file's sha256 and size.
//
//	go run . -listen 127.0.0.1:0
//
// prints "listening http://ADDR/mcp" once it serves.
package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/mcpblob/mcpblob/core/mcp"
	"github.com/mcpblob/mcpblob/core/mcp/mcphttp"
)

// Name is the serverInfo name clients must see.
const Name = "embed-hasher"

// MaxFileSize is hash_file's x-mcp-file maxSize.
const MaxFileSize = 2 << 30

var hashFileInput = json.RawMessage(fmt.Sprintf(`{
  "type": "object",
  "properties": {
    "file": {
      "type": "string",
      "description": "The file, as a base64 data URI",
      "x-mcp-file": {"maxSize": %d, "accept": ["application/octet-stream", "text/*"]}
    }
  },
  "required": ["file"]
}`, MaxFileSize))

var hashFileOutput = json.RawMessage(`{
  "type": "object",
  "properties": {"sha256": {"type": "string"}, "size": {"type": "integer"}},
  "required": ["sha256", "size"]
}`)

// NewServer is the MCP server: serverInfo of its own, one tool.
func NewServer() (*mcp.Server, error) {
	// MaxFileBytes (default 1 GiB) bounds every x-mcp-file maxSize:
	// AddTool refuses a larger one, so raise it to the tool's.
	srv := mcp.NewServer(mcp.Implementation{Name: Name, Version: "1.0.0"}, &mcp.Options{MaxFileBytes: MaxFileSize})
	err := mcp.AddTypedTool(srv, &mcp.Tool{
		Name:         "hash_file",
		Title:        "Hash a file",
		Description:  "Returns the sha256 and size of the file passed as a data URI.",
		InputSchema:  hashFileInput,
		OutputSchema: hashFileOutput,
		Annotations:  json.RawMessage(`{"readOnlyHint": true}`),
	}, hashFile)
	return srv, err
}

// hashFileArgs are hash_file's arguments: the file, decoded while the
// request arrived (a refused one never reaches the handler).
type hashFileArgs struct {
	File *mcp.File `json:"file"`
}

// hashFile reads the spooled file as a stream: only a copy buffer is held.
func hashFile(c *mcp.Call, in hashFileArgs) (*mcp.ToolResult, error) {
	h := sha256.New()
	n, err := io.Copy(h, in.File.Reader())
	if err != nil {
		return nil, fmt.Errorf("hash_file: read: %w", err)
	}
	sum := hex.EncodeToString(h.Sum(nil))
	return &mcp.ToolResult{
		Content:           []mcp.Content{mcp.Text{Text: fmt.Sprintf("sha256 %s, %d bytes", sum, n)}},
		StructuredContent: mcp.Object{"sha256": sum, "size": n},
	}, nil
}

func main() {
	listen := flag.String("listen", "127.0.0.1:0", "address to serve on (loopback: the handler serves localhost names only)")
	flag.Parse()
	if err := run(*listen); err != nil {
		fmt.Fprintln(os.Stderr, "embedtest:", err)
		os.Exit(1)
	}
}

func run(listen string) error {
	srv, err := NewServer()
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", mcphttp.NewHandler(srv, mcphttp.Options{}))
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	fmt.Printf("listening http://%s/mcp\n", ln.Addr())
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	go func() {
		<-ctx.Done()
		srv.Close() // ends open streams first
		_ = hs.Shutdown(context.Background())
	}()
	if err := hs.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
