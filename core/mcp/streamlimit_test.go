package mcp

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcpblob/mcpblob/core/mcp/resstream"
)

// endless is a body of n bytes that counts what was read from it.
type endless struct {
	left   int64
	read   atomic.Int64
	closed atomic.Bool
}

func (e *endless) Read(p []byte) (int, error) {
	if e.left <= 0 {
		return 0, io.EOF
	}
	n := int(min(int64(len(p)), e.left))
	clear(p[:n])
	e.left -= int64(n)
	e.read.Add(int64(n))
	return n, nil
}

func (e *endless) Close() error { e.closed.Store(true); return nil }

const twoHundredMiB = 200 << 20

// streamServer offers one streamable template whose Stream handler ignores
// maxSize and answers what answer returns.
func streamServer(answer func(uri string) *resstream.Answer) *Server {
	s := NewServer(testImpl, nil)
	s.AddResourceTemplate(ResourceTemplate{URITemplate: "big:///{name}", Name: "big", Streamable: true}, ResourceHandler{
		Read: func(c *Call, uri string) (*Contents, error) { return nil, ErrNoResource },
		Stream: func(c *Call, uri string, maxSize int64) (*resstream.Answer, error) {
			return answer(uri), nil
		},
	})
	return s
}

// streamRequest sends resources/stream of uri from a 2026-07-28 client
// allowing maxStreamSize bytes and returns the raw recorder.
func streamRequest(t *testing.T, s *Server, uri string, maxStreamSize int64) *recorder {
	t.Helper()
	c := newModernClient(t, s)
	c.caps = `{"resourceStreaming":{"maxStreamSize":` + jsonInt(maxStreamSize) + `}}`
	rec := newRecorder()
	s.ServeMCP(&Request{Method: http.MethodPost, Header: c.headers("resources/stream", ""),
		Body: strings.NewReader(c.message("resources/stream", `{"uri":"`+uri+`"}`))}, rec)
	return rec
}

func jsonInt(n int64) string { b, _ := json.Marshal(n); return string(b) }

// A handler that answers 200 MiB to a client allowing 10 bytes is refused
// by the core with -32004, and not one byte of its body is read.
func TestStreamOverMaxStreamSizeRefused(t *testing.T) {
	body := &endless{left: twoHundredMiB}
	s := streamServer(func(uri string) *resstream.Answer {
		return &resstream.Answer{URI: uri, MIMEType: "application/octet-stream", Size: twoHundredMiB, Body: body}
	})
	rec := streamRequest(t, s, "big:///a", 10)
	var msg rpcMessage
	if err := json.Unmarshal(rec.body.Bytes(), &msg); err != nil || msg.Error == nil {
		t.Fatalf("want a JSON-RPC error, got %d %.300s", rec.statusCode(), rec.body.Bytes())
	}
	if msg.Error.Code != resstream.CodeTooLarge || !strings.Contains(string(msg.Error.Data), `"maxStreamSize":10`) {
		t.Fatalf("error %+v %s, want %d naming maxStreamSize 10", msg.Error, msg.Error.Data, resstream.CodeTooLarge)
	}
	if n := body.read.Load(); n != 0 || !body.closed.Load() {
		t.Fatalf("the refused body was read for %d bytes (closed %v)", n, body.closed.Load())
	}
}

// A body of unknown size is cut once it passes the client's maxStreamSize:
// the write fails (the transport breaks the response) after at most 10
// bytes, and the source is read no further than one byte past them.
func TestStreamUnknownSizeCutAtMaxStreamSize(t *testing.T) {
	body := &endless{left: twoHundredMiB}
	s := streamServer(func(uri string) *resstream.Answer {
		return &resstream.Answer{URI: uri, MIMEType: "application/octet-stream", Size: -1, Body: body}
	})
	rec := streamRequest(t, s, "big:///a", 10)
	if !errors.Is(rec.err, resstream.ErrOverMaxStreamSize) {
		t.Fatalf("body write returned %v, want resstream.ErrOverMaxStreamSize", rec.err)
	}
	if rec.body.Len() > 10 {
		t.Fatalf("%d bytes sent to a client allowing 10", rec.body.Len())
	}
	if n := body.read.Load(); n > 11 || !body.closed.Load() {
		t.Fatalf("source read for %d bytes (closed %v)", n, body.closed.Load())
	}
}

// A body longer than its declared Size goes out as exactly Size bytes, with
// MCP-Resource-Uri set by the core.
func TestStreamBodyCutAtDeclaredSize(t *testing.T) {
	body := &endless{left: twoHundredMiB}
	s := streamServer(func(uri string) *resstream.Answer {
		return &resstream.Answer{MIMEType: "application/octet-stream", Size: 5, Body: body}
	})
	rec := streamRequest(t, s, "big:///a", 10)
	if rec.err != nil || rec.body.Len() != 5 || rec.size != 5 {
		t.Fatalf("sent %d bytes (declared %d, err %v), want 5", rec.body.Len(), rec.size, rec.err)
	}
	if got := rec.header.Get(resstream.HeaderResourceURI); got != "big:///a" {
		t.Fatalf("MCP-Resource-Uri %q, want the requested URI", got)
	}
	if n := body.read.Load(); n > 5 {
		t.Fatalf("source read for %d bytes", n)
	}
}

// BodyFile finds the *os.File under the core's wrappers and a FileBody's.
func TestBodyFile(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "f"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	a, err := resstream.Check("x:///f", &resstream.Answer{Size: 0, Body: resstream.WithDone(f, func() {})}, 0)
	if err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]io.Reader{"wrapped": resstream.WithDone(a.Body, func() {}),
		"file body": fileBody{f}, "file": f} {
		if got, ok := resstream.BodyFile(body); !ok || got != f {
			t.Errorf("%s: BodyFile = %v, %v", name, got, ok)
		}
	}
	if _, ok := resstream.BodyFile(strings.NewReader("x")); ok {
		t.Error("BodyFile found a file under a strings.Reader")
	}
}

type fileBody struct{ f *os.File }

func (b fileBody) Read(p []byte) (int, error) { return b.f.Read(p) }
func (b fileBody) Close() error               { return b.f.Close() }
func (b fileBody) OSFile() *os.File           { return b.f }

// AddTool refuses a file input whose maxSize the server would not honour.
func TestAddToolRefusesMaxSizeOverMaxFileBytes(t *testing.T) {
	s := NewServer(testImpl, &Options{MaxFileBytes: 1 << 20})
	tool := func(name string, maxSize int) *Tool {
		return &Tool{Name: name, Handler: func(*Call) (*ToolResult, error) { return nil, nil },
			InputSchema: json.RawMessage(`{"type":"object","properties":{"f":{"type":"string","x-mcp-file":{"maxSize":` +
				jsonInt(int64(maxSize)) + `}}}}`)}
	}
	err := s.AddTool(tool("big", 2<<20))
	if err == nil || !strings.Contains(err.Error(), `"f"`) || !strings.Contains(err.Error(), "MaxFileBytes 1048576") {
		t.Fatalf("AddTool with maxSize over MaxFileBytes: %v", err)
	}
	if _, found := s.ToolReadOnly("big"); found {
		t.Fatal("the refused tool was registered")
	}
	if err := s.AddTool(tool("ok", 1<<20)); err != nil {
		t.Fatalf("maxSize equal to MaxFileBytes: %v", err)
	}
	if err := s.AddTool(tool("ok", 1)); err == nil {
		t.Fatal("a duplicate name was accepted")
	}
}

// NewServer names the server after the embedder and wants a name.
func TestNewServerImplementation(t *testing.T) {
	s := NewServer(Implementation{Name: "acme-files", Version: "2.1", Title: "Acme"}, nil)
	c := newModernClient(t, s)
	res := c.request("server/discover", "", `{}`)
	if !strings.Contains(string(res.Result), `"io.modelcontextprotocol/serverInfo":{"name":"acme-files","title":"Acme","version":"2.1"}`) {
		t.Fatalf("server/discover: %s", res.Result)
	}
	defer func() {
		if recover() == nil {
			t.Fatal("NewServer without a Name did not panic")
		}
	}()
	NewServer(Implementation{}, nil)
}
