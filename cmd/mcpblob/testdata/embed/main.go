// Command embed is a large-file MCP server built by another team on
// mcpblob's streaming core: it adds its own tool, hash_file, whose "file"
// argument is an x-mcp-file input (up to 2 GiB) decoded while it arrives,
// and answers with the file's sha256 and size.
//
//	go run . -listen 127.0.0.1:0 -data ./data
//
// prints "listening http://ADDR/mcp" once it serves.
package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"syscall"

	"github.com/mcpblob/mcpblob/core/mcp"
	"github.com/mcpblob/mcpblob/core/server"
	"github.com/mcpblob/mcpblob/core/server/front"
	"github.com/mcpblob/mcpblob/storage/localfs"
)

// MaxFileSize is hash_file's x-mcp-file maxSize.
const MaxFileSize = 2 << 30

// HashFileInput is hash_file's input schema.
var HashFileInput = json.RawMessage(fmt.Sprintf(`{
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

// HashFileOutput is hash_file's output schema.
var HashFileOutput = json.RawMessage(`{
  "type": "object",
  "properties": {
    "sha256": {"type": "string"},
    "size": {"type": "integer"},
    "mediaType": {"type": "string"}
  },
  "required": ["sha256", "size", "mediaType"]
}`)

// Register adds hash_file to s (server.Options.Extend). The tool is fixed,
// so a refusal is a bug: it panics.
func Register(s *mcp.Server) {
	err := s.AddTool(&mcp.Tool{
		Name:         "hash_file",
		Title:        "Hash a file",
		Description:  "Returns the sha256 and size of the file passed as a data URI.",
		InputSchema:  HashFileInput,
		OutputSchema: HashFileOutput,
		Annotations:  json.RawMessage(`{"readOnlyHint": true}`),
		Handler:      hashFile,
	})
	if err != nil {
		panic(err)
	}
}

// hashFile reads the spooled file as a stream: the payload was decoded
// while the request arrived, so only a copy buffer is held here.
func hashFile(c *mcp.Call) (*mcp.ToolResult, error) {
	f, err := c.File("file")
	if err != nil {
		return nil, err // a *mcp.FileError (maxSize, accept, malformed data URI…) is an isError result
	}
	h := sha256.New()
	n, err := io.Copy(h, &ctxReader{ctx: c.Context(), r: f.Reader()})
	if err != nil {
		return nil, fmt.Errorf("hash_file: read: %w", err)
	}
	if n != f.Size {
		return nil, fmt.Errorf("hash_file: read %d bytes, File.Size says %d", n, f.Size)
	}
	sum := hex.EncodeToString(h.Sum(nil))
	return &mcp.ToolResult{
		Content:           []mcp.Content{mcp.Text{Text: fmt.Sprintf("sha256 %s, %d bytes (%s)", sum, n, f.MediaType)}},
		StructuredContent: mcp.Object{"sha256": sum, "size": n, "mediaType": f.MediaType},
	}, nil
}

// ctxReader stops reading once ctx ends (the client left).
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c *ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// Start serves hash_file on ln with a local store in dir; stop shuts it
// down and closes the store.
func Start(ln net.Listener, dir string) (stop func() error, err error) {
	st, err := localfs.Open(dir, localfs.Options{})
	if err != nil {
		return nil, err
	}
	srv, err := server.New(server.Options{
		Backend: st,
		Front:   front.Options{Listen: ln.Addr().String()},
		Extend:  Register,
		// The server-wide bound on a message's decoded data URIs (default
		// 1 GiB) caps every x-mcp-file maxSize: raise it to the tool's.
		MCP: mcp.Options{MaxFileBytes: MaxFileSize},
	})
	if err != nil {
		st.Close()
		return nil, err
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	return func() error {
		err := srv.Shutdown(context.Background())
		if serr := <-done; err == nil {
			err = serr
		}
		if cerr := st.Close(); err == nil {
			err = cerr
		}
		return err
	}, nil
}

func main() {
	listen := flag.String("listen", "127.0.0.1:0", "address to serve on")
	data := flag.String("data", "./data", "local store folder")
	flag.Parse()
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		fmt.Fprintln(os.Stderr, "embed:", err)
		os.Exit(1)
	}
	stop, err := Start(ln, *data)
	if err != nil {
		fmt.Fprintln(os.Stderr, "embed:", err)
		os.Exit(1)
	}
	fmt.Printf("listening http://%s/mcp\n", ln.Addr())
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	<-ctx.Done()
	if err := stop(); err != nil {
		fmt.Fprintln(os.Stderr, "embed: shutdown:", err)
		os.Exit(1)
	}
}
