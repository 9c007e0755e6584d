package blobs

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/mcpblob/mcpblob/core/mcp"
	"github.com/mcpblob/mcpblob/core/mcp/mcptest"
	"github.com/mcpblob/mcpblob/storage"
	"github.com/mcpblob/mcpblob/storage/localfs"
	"github.com/mcpblob/mcpblob/storage/s3"
	"github.com/mcpblob/mcpblob/storage/storagetest/s3test"
)

// The blob tools are tested here as an MCP client sees them, on a protocol
// server with the App registered, through mcptest's in-memory transport:
// no socket and no HTTP front (core/server tests what the front adds:
// Host/Origin, authentication, body pacing, connection handling).

// TestMain stops the shared SeaweedFS node (started on first use by the
// tests that run on S3) after the tests.
func TestMain(m *testing.M) { s3test.Main(m) }

// Protocol versions the tests speak.
const (
	legacyVersion = mcptest.Version20251125 // initialize, Mcp-Session-Id
	modernVersion = mcptest.Version20260728 // stateless, per-request _meta
)

// testBackend opens a fresh store of one kind for a test.
type testBackend struct {
	name string
	new  func(t *testing.T) storage.Backend
}

// testBackends are the real stores: the local filesystem and S3 (a
// SeaweedFS node, storage/storagetest/s3test).
func testBackends() []testBackend {
	return []testBackend{
		{"localfs", func(t *testing.T) storage.Backend { return newLocalStore(t) }},
		{"s3", func(t *testing.T) storage.Backend {
			srv := s3test.Shared(t)
			b, err := s3.Open(t.Context(), s3.Options{Endpoint: "http://" + srv.Endpoint,
				AccessKey: srv.AccessKey, SecretKey: srv.SecretKey, Bucket: s3test.BucketName("blobs"), CreateBucket: true})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { b.Close() })
			return b
		}},
	}
}

// newLocalStore opens a local store in a temporary folder.
func newLocalStore(t *testing.T) *localfs.Store {
	t.Helper()
	st, err := localfs.Open(t.TempDir(), localfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// logBuffer is a goroutine-safe sink for a test server's log.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// toolServer is the App on a protocol server, both logging at debug level
// into logs, as core/server assembles them.
type toolServer struct {
	srv  *mcp.Server
	be   storage.Backend
	logs *logBuffer
}

// newToolServer registers an App on be with bo on a server with mo.
func newToolServer(t *testing.T, be storage.Backend, mo mcp.Options, bo Options) *toolServer {
	t.Helper()
	logs := &logBuffer{}
	logger := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	mo.Logger = logger
	s := mcp.NewServer(mcp.Implementation{Name: "blobs-test"}, &mo)
	bo.Backend, bo.Logger = be, logger
	if bo.MaxFileBytes <= 0 {
		bo.MaxFileBytes = mo.MaxFileBytes
	}
	app, err := New(bo)
	if err != nil {
		t.Fatal(err)
	}
	if err := app.Register(s); err != nil {
		t.Fatal(err)
	}
	return &toolServer{srv: s, be: be, logs: logs}
}

// client returns a client of version declaring caps, connected (a
// 2025-11-25 one has opened its session).
func (s *toolServer) client(t *testing.T, version, caps string) *toolClient {
	t.Helper()
	mc := mcptest.NewInMemory(s.srv).Client(version)
	mc.Capabilities = caps
	if err := mc.Connect(t.Context()); err != nil {
		t.Fatalf("connect: %v", err)
	}
	return &toolClient{t: t, Client: mc}
}

// noBugLogs fails the test if the server logged a bug or an error.
func (s *toolServer) noBugLogs(t *testing.T) {
	t.Helper()
	if l := s.logs.String(); strings.Contains(l, "bug:") || strings.Contains(l, "level=ERROR") {
		t.Errorf("the server logged a bug or an error:\n%s", l)
	}
}

// toolClient is an mcptest client bound to a test: a failure to talk to
// the server ends the test; statuses and JSON-RPC errors are the test's
// to judge.
type toolClient struct {
	t testing.TB
	*mcptest.Client
}

// in returns the client for use in test t, typically a subtest.
func (c *toolClient) in(t testing.TB) *toolClient { return &toolClient{t: t, Client: c.Client} }

// with returns a client that also sends h's headers.
func (c *toolClient) with(h map[string]string) *toolClient {
	return &toolClient{t: c.t, Client: c.Client.With(h)}
}

func (c *toolClient) send(r *mcptest.Request) *mcptest.Response {
	c.t.Helper()
	res, err := c.Send(r)
	if err != nil {
		c.t.Fatal(err)
	}
	return res
}

// callTool calls tool name with args, a JSON object sent as is (member
// order matters to the streaming scanner).
func (c *toolClient) callTool(name, args string) *mcptest.Response {
	c.t.Helper()
	res, err := c.CallTool(c.t.Context(), name, args)
	if err != nil {
		c.t.Fatal(err)
	}
	return res
}

// raw sends body, a whole JSON-RPC message, exactly as written.
func (c *toolClient) raw(body string) *mcptest.Response {
	c.t.Helper()
	return c.send(c.NewRaw(c.t.Context(), strings.NewReader(body), int64(len(body))))
}

// toolResult is the part of a CallToolResult the tests look at.
type toolResult struct {
	IsError           bool `json:"isError"`
	Content           []struct{ Type, Text, URI string }
	StructuredContent struct {
		URI, Key, SHA256, MimeType string
		Size                       int64
	}
	ResultType string `json:"resultType"`
}

// toolOf decodes m as a CallToolResult and fails the test if m is not a
// result.
func toolOf(t testing.TB, m mcptest.Message) toolResult {
	t.Helper()
	var r toolResult
	if m.Result == nil || json.Unmarshal(m.Result, &r) != nil {
		t.Fatalf("not a tool result: %+v", m)
	}
	return r
}

// putBlob stores data under key with media type mt.
func putBlob(t *testing.T, be storage.Backend, key, mt string, data []byte) {
	t.Helper()
	ctx := context.Background()
	w, err := be.Create(ctx, key, storage.CreateOptions{MediaType: mt, Size: int64(len(data))})
	if err == nil {
		_, err = w.Write(data)
	}
	if err == nil {
		_, err = w.Commit(ctx)
	}
	if err != nil {
		t.Fatalf("put %s: %v", key, err)
	}
}

// stored reports whether key exists in be.
func stored(t *testing.T, be storage.Backend, key string) bool {
	t.Helper()
	_, err := be.Stat(context.Background(), key)
	return err == nil
}

// listAll lists every key in be (at most 1000).
func listAll(t *testing.T, be storage.Backend) []string {
	t.Helper()
	page, err := be.List(context.Background(), "", "", 1000)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, it := range page.Items {
		keys = append(keys, it.Key)
	}
	return keys
}

func hexSum(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func jsonString(s string) string { b, _ := json.Marshal(s); return string(b) }
