package server_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"

	"github.com/mcpblob/mcpblob/core/mcp"
	"github.com/mcpblob/mcpblob/core/server"
	"github.com/mcpblob/mcpblob/core/server/front"
	"github.com/mcpblob/mcpblob/storage/localfs"
)

// hashFile is a tool of your own: its "file" argument is an x-mcp-file
// input, so the handler gets the bytes as a stream (decoded while they
// arrived, bounded by maxSize, never held in memory) and hashes them.
var hashFile = &mcp.Tool{
	Name:        "hash_file",
	Description: "Return the SHA-256 and size of a file.",
	InputSchema: json.RawMessage(`{"type":"object","properties":{
		"file":{"type":"string","format":"uri","x-mcp-file":{"maxSize":1073741824,"accept":["application/pdf","text/*"]}}},
		"required":["file"]}`),
	Handler: func(c *mcp.Call) (*mcp.ToolResult, error) {
		f, err := c.File("file")
		if err != nil {
			return nil, err // a *mcp.FileError (maxSize, accept, malformed data URI…) is an isError result
		}
		h := sha256.New()
		if _, err := io.Copy(h, f.Reader()); err != nil {
			return nil, err
		}
		sum := hex.EncodeToString(h.Sum(nil))
		return &mcp.ToolResult{Content: []mcp.Content{mcp.Text{Text: fmt.Sprintf("%d bytes, sha256 %s", f.Size, sum)}},
			StructuredContent: mcp.Object{"size": f.Size, "sha256": sum}}, nil
	},
}

// Example_extend serves a tool of your own, next to mcpblob's blob tools,
// on the same fasthttp front end, and calls it once over HTTP. A program
// that wants only its own tools needs neither this package nor a store:
// see core/mcp's examples, served with package mcphttp.
func Example_extend() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	store, err := localfs.Open(dir, localfs.Options{})
	if err != nil {
		panic(err)
	}
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	srv, err := server.New(server.Options{
		Backend: store,
		Extend: func(s *mcp.Server) {
			if err := s.AddTool(hashFile); err != nil {
				panic(err)
			}
		},
		Front: front.Options{Listen: ln.Addr().String()},
	})
	if err != nil {
		panic(err)
	}
	go srv.Serve(ln)
	defer srv.Shutdown(context.Background())

	// A 2026-07-28 (stateless) tools/call with a small data URI.
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"hash_file",` +
		`"arguments":{"file":"data:text/plain;base64,aGVsbG8="},` +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	req, _ := http.NewRequest("POST", "http://"+ln.Addr().String()+"/mcp", strings.NewReader(body))
	for k, v := range map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
		"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "hash_file"} {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	var msg struct {
		Result struct {
			StructuredContent struct {
				Size   int64  `json:"size"`
				SHA256 string `json:"sha256"`
			} `json:"structuredContent"`
		} `json:"result"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&msg)
	fmt.Println(msg.Result.StructuredContent.Size, msg.Result.StructuredContent.SHA256)
	// Output: 5 2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824
}
