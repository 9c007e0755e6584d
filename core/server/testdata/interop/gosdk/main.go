// Command gosdk checks interop with the official Go SDK client
// (github.com/modelcontextprotocol/go-sdk v1.8.0) in both protocol eras:
//
//	go run . http://127.0.0.1:PORT/mcp
//
// v1.8.0 speaks 2026-07-28 by default (server/discover first); the second
// pass pins 2025-11-25. The server must run with the conformance fixtures
// and hold "interop/hello.txt" (13 bytes, text/plain). Exits 1 on failure.
package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func check(ver string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := mcp.NewClient(&mcp.Implementation{Name: "gosdk-interop", Version: "1"}, nil)
	var opts *mcp.ClientSessionOptions
	if ver != "" {
		opts = &mcp.ClientSessionOptions{ProtocolVersion: ver}
	}
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: os.Args[1]}, opts)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer cs.Close()
	modern := cs.ID() == ""
	if (ver == "") != modern {
		return fmt.Errorf("unexpected era: session id %q", cs.ID())
	}
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		return fmt.Errorf("tools/list: %w", err)
	}
	if len(tools.Tools) < 4 {
		return fmt.Errorf("tools/list: %d tools", len(tools.Tools))
	}
	rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "blob:///interop/hello.txt"})
	if err != nil {
		return fmt.Errorf("resources/read: %w", err)
	}
	if got := rr.Contents[0].Text; got != "hello \"text\"\n" {
		return fmt.Errorf("resources/read text %q", got)
	}
	if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "blob:///interop/missing"}); err == nil {
		return fmt.Errorf("missing resource read succeeded")
	}
	// In 2026-07-28 this sends Mcp-Name and Mcp-Param-Blob-Key (x-mcp-header).
	ct, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "stat_blob", Arguments: map[string]any{"key": "interop/hello.txt"}})
	if err != nil {
		return fmt.Errorf("stat_blob: %w", err)
	}
	if ct.IsError || !strings.Contains(fmt.Sprint(ct.StructuredContent), "size:13") {
		return fmt.Errorf("stat_blob result %+v", ct.StructuredContent)
	}
	ct, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "test_tool_with_progress", Arguments: map[string]any{}})
	if err != nil || ct.IsError {
		return fmt.Errorf("test_tool_with_progress: %v", err)
	}
	return nil
}

func main() {
	failed := false
	for _, v := range []string{"", "2025-11-25"} {
		name := v
		if name == "" {
			name = "default (2026-07-28)"
		}
		if err := check(v); err != nil {
			fmt.Printf("%s: FAIL: %v\n", name, err)
			failed = true
			continue
		}
		fmt.Printf("%s: ok\n", name)
	}
	if failed {
		os.Exit(1)
	}
}
