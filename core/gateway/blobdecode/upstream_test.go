package blobdecode

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"math/rand/v2"
	"mime"
	"net/http"
	"testing"

	"github.com/mcpblob/mcpblob/core/mcp"
	"github.com/mcpblob/mcpblob/core/mcp/mcptest"
)

// TestRealServerAnswers decodes the resources/read answers of mcpblob's
// own MCP server (core/mcp, in memory): a 3 MiB blob streamed with an
// exact Content-Length, a small blob and a text, as JSON and, when the
// request asks for progress, as SSE after a progress notification, in
// both protocol eras. The bytes must be the resource's.
func TestRealServerAnswers(t *testing.T) {
	big := make([]byte, 3<<20)
	_, _ = io.ReadFull(rand.NewChaCha8([32]byte{3}), big)
	text := "h\u00e9llo \"quoted\" </script> \u2028 \U0001F600\n\t\x01"
	srv := mcp.NewServer(mcp.Implementation{Name: "upstream", Version: "1.0.0"}, nil)
	resources := map[string][]byte{"test:///big": big, "test:///small": big[:1000], "test:///text": []byte(text)}
	for uri := range resources {
		srv.AddResource(mcp.Resource{URI: uri, Name: uri}, func(c *mcp.Call) (*mcp.Contents, error) {
			c.Progress(1, 2, "reading")
			switch uri {
			case "test:///big":
				return &mcp.Contents{URI: uri, MIMEType: "application/octet-stream", Body: io.NopCloser(bytes.NewReader(big)), Size: int64(len(big))}, nil
			case "test:///small":
				return &mcp.Contents{URI: uri, MIMEType: "image/png", Blob: big[:1000]}, nil
			}
			return &mcp.Contents{URI: uri, MIMEType: "text/plain", Text: text}, nil
		})
	}
	ctx := context.Background()
	seen := map[string]bool{}
	for _, version := range []string{mcptest.Version20251125, mcptest.Version20260728} {
		c := mcptest.NewInMemory(srv).Client(version)
		if !c.Modern() {
			if err := c.Connect(ctx); err != nil {
				t.Fatal(err)
			}
		}
		for uri, want := range resources {
			for _, progress := range []bool{false, true} {
				params := `{"uri":"` + uri + `"}`
				if progress {
					params = `{"_meta":{"progressToken":"p-1"},"uri":"` + uri + `"}`
				}
				req := c.NewRequestID(ctx, `"read-1"`, "resources/read", params)
				resp, err := c.Open(req)
				if err != nil {
					t.Fatal(err)
				}
				var out bytes.Buffer
				res, err := Decode(resp.Body, resp.Header.Get("Content-Type"), json.RawMessage(`"read-1"`), &out, Options{})
				resp.Body.Close()
				mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
				seen[mt] = true
				if err != nil {
					t.Fatalf("%s %s (%s): %v", version, uri, mt, err)
				}
				if !bytes.Equal(out.Bytes(), want) || res.URI != uri {
					t.Fatalf("%s %s (%s): %d bytes, uri %q", version, uri, mt, out.Len(), res.URI)
				}
			}
		}
	}
	if !seen[jsonType] {
		t.Fatalf("answers came as %v", seen)
	}
}

// TestRealServerToolResults rewrites the tools/call results of mcpblob's
// own MCP server: an image over the threshold is offloaded, the text,
// the small audio and the embedded resource stay as they were, as JSON
// and as the last event of an SSE answer (asked for with a progress
// token, after a progress notification).
func TestRealServerToolResults(t *testing.T) {
	img := make([]byte, 2<<20)
	_, _ = io.ReadFull(rand.NewChaCha8([32]byte{4}), img)
	srv := mcp.NewServer(mcp.Implementation{Name: "upstream", Version: "1.0.0"}, nil)
	err := srv.AddTool(&mcp.Tool{Name: "snap", InputSchema: json.RawMessage(`{"type":"object"}`),
		Handler: func(c *mcp.Call) (*mcp.ToolResult, error) {
			c.Progress(1, 1, "snapped")
			return &mcp.ToolResult{Content: []mcp.Content{mcp.Text{Text: "caption"}, mcp.Image{Data: img, MIMEType: "image/png"},
				mcp.Audio{Data: img[:100], MIMEType: "audio/wav"}, mcp.EmbeddedResource{URI: "test:///e", MIMEType: "x/y", Blob: img[:2000]}}}, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	c := mcptest.NewInMemory(srv).Client(mcptest.Version20260728)
	seen := map[string]bool{}
	for _, params := range []string{`{"name":"snap","arguments":{}}`, `{"_meta":{"progressToken":1},"name":"snap","arguments":{}}`} {
		call := func() *http.Response {
			resp, err := c.Open(c.NewRequestID(ctx, "5", "tools/call", params))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { resp.Body.Close() })
			return resp
		}
		ref, err := io.ReadAll(call().Body)
		if err != nil {
			t.Fatal(err)
		}
		resp := call()
		m := &memSinks{}
		opts := RewriteOptions{Open: m.open}
		var out bytes.Buffer
		msg := string(ref)
		mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
		seen[mt] = true
		if mt == sseType {
			events := refEvents(msg)
			msg = events[len(events)-1]
			s := newSSEReader(resp.Body, defaultMaxLine)
			for s.next() == nil {
				out.Reset()
				if _, err := Rewrite(s, &out, opts); err != nil {
					t.Fatal(err)
				}
			}
		} else if _, err := Rewrite(resp.Body, &out, opts); err != nil {
			t.Fatal(err)
		}
		if len(m.committed) != 1 || m.committed[0].Path != "/result/content/1/data" || m.committed[0].Type != "image" {
			t.Fatalf("%s: offloaded %+v", params, m.committed)
		}
		checkOffloaded(t, msg, out.Bytes(), m)
	}
	if !seen[jsonType] || !seen[sseType] {
		t.Fatalf("answers came as %v: both JSON and SSE should have been tried", seen)
	}
}
