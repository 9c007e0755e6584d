// Command gosdk is an interop client built on the official MCP Go SDK. It
// connects to an mcpblob server, lists resources, reads one blob through
// resources/read, checks its sha256 and calls stat_blob. It exits non-zero,
// with the reason on stderr, on any mismatch.
package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	url := flag.String("url", "", "MCP endpoint, e.g. http://127.0.0.1:8080/mcp")
	uri := flag.String("uri", "", "resource URI to read")
	key := flag.String("key", "", "blob key for stat_blob")
	want := flag.String("sha256", "", "expected sha256 (hex) of the blob")
	version := flag.String("protocol", "", "protocol version to request (empty: the SDK's latest)")
	token := flag.String("token", "", "bearer token")
	flag.Parse()
	if err := run(*url, *uri, *key, *want, *version, *token); err != nil {
		fmt.Fprintln(os.Stderr, "gosdk interop:", err)
		os.Exit(1)
	}
}

type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	if b.token != "" {
		r = r.Clone(r.Context())
		r.Header.Set("Authorization", "Bearer "+b.token)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// listsResource pages through resources/list until it finds uri.
func listsResource(ctx context.Context, cs *mcp.ClientSession, uri string) error {
	var cursor string
	for {
		res, err := cs.ListResources(ctx, &mcp.ListResourcesParams{Cursor: cursor})
		if err != nil {
			return fmt.Errorf("resources/list: %w", err)
		}
		for _, r := range res.Resources {
			if r.URI == uri {
				return nil
			}
		}
		if res.NextCursor == "" {
			return fmt.Errorf("resources/list does not list %s", uri)
		}
		cursor = res.NextCursor
	}
}

func run(url, uri, key, want, version, token string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "mcpblob-interop-gosdk", Version: "1.0.0"}, nil)
	transport := &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearer{token}}, DisableStandaloneSSE: true}
	cs, err := client.Connect(ctx, transport, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer cs.Close()
	negotiated := cs.InitializeResult().ProtocolVersion

	if err := listsResource(ctx, cs, uri); err != nil {
		return err
	}

	read, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
	if err != nil {
		return fmt.Errorf("resources/read: %w", err)
	}
	if len(read.Contents) != 1 {
		return fmt.Errorf("resources/read: %d contents, want 1", len(read.Contents))
	}
	sum := sha256.Sum256(read.Contents[0].Blob)
	if got := hex.EncodeToString(sum[:]); got != want {
		return fmt.Errorf("resources/read: sha256 %s (%d bytes), want %s", got, len(read.Contents[0].Blob), want)
	}

	// An unknown resource must be an error, never empty contents (SEP-2164).
	if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri + ".missing"}); err == nil {
		return fmt.Errorf("resources/read of a missing blob succeeded")
	}
	// The era: 2026-07-28 is stateless (no session id), 2025-11-25 has one.
	if modern := cs.ID() == ""; modern != (negotiated >= "2026-07-28") {
		return fmt.Errorf("protocol %s with session id %q", negotiated, cs.ID())
	}

	// tools/list first, as a host does: in 2026-07-28 the SDK learns from the
	// tools' x-mcp-header annotations which Mcp-Param-* headers to send.
	if _, err := cs.ListTools(ctx, nil); err != nil {
		return fmt.Errorf("tools/list: %w", err)
	}
	call, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "stat_blob", Arguments: map[string]any{"key": key}})
	if err != nil {
		return fmt.Errorf("tools/call stat_blob: %w", err)
	}
	if call.IsError {
		return fmt.Errorf("tools/call stat_blob: isError result: %+v", call.Content)
	}
	raw, _ := json.Marshal(call.StructuredContent)
	var sc struct {
		Key    string `json:"key"`
		SHA256 string `json:"sha256"`
		Size   int64  `json:"size"`
	}
	if err := json.Unmarshal(raw, &sc); err != nil {
		return fmt.Errorf("stat_blob structuredContent: %w", err)
	}
	if sc.Key != key || sc.SHA256 != want || sc.Size != int64(len(read.Contents[0].Blob)) {
		return fmt.Errorf("stat_blob structuredContent = %s, want key %s sha256 %s", raw, key, want)
	}
	fmt.Printf("ok protocol=%s bytes=%d sha256=%s\n", negotiated, len(read.Contents[0].Blob), want)
	return nil
}
