package mcpc_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/mcpblob/mcpblob/core/mcp"
	"github.com/mcpblob/mcpblob/core/mcp/mcphttp"
	"github.com/mcpblob/mcpblob/loadtest/rig/mcpc"
)

func TestInitCallMessage(t *testing.T) {
	srv := mcp.NewServer(mcp.Implementation{Name: "mcpc-test", Version: "1"}, nil)
	err := srv.AddTool(&mcp.Tool{Name: "ping", InputSchema: json.RawMessage(`{"type":"object"}`),
		Handler: func(*mcp.Call) (*mcp.ToolResult, error) {
			return &mcp.ToolResult{Content: []mcp.Content{mcp.Text{Text: "pong"}}}, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(mcphttp.NewHandler(srv, mcphttp.Options{}))
	defer hs.Close()
	ctx := context.Background()
	c := mcpc.New(hs.URL + "/mcp")
	if err := c.Init(ctx, map[string]any{"elicitation": map[string]any{}}); err != nil {
		t.Fatal(err)
	}
	if c.Session == "" || len(c.Caps) == 0 {
		t.Fatalf("session %q, capabilities %s", c.Session, c.Caps)
	}
	names, err := c.ToolNames(ctx)
	if err != nil || !slices.Equal(names, []string{"ping"}) {
		t.Fatalf("tools %v, %v", names, err)
	}
	err = c.Call(ctx, "no/such-method", map[string]any{}, nil)
	if e, ok := err.(interface{ Unwrap() error }); !ok || e.Unwrap().(*mcpc.RPCError).Code != -32601 {
		t.Fatalf("unknown method: %v", err)
	}
	msg, err := mcpc.Message("text/event-stream", []byte("id: 1\ndata:\n\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\"}\n\ndata: {\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{}}\n\n"))
	if err != nil || string(msg) != `{"id":7,"result":{}}` {
		t.Fatalf("SSE answer %s, %v", msg, err)
	}
}
