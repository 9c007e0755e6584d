package tracing_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpblob/mcpblob/core/gateway"
	"github.com/mcpblob/mcpblob/core/server"
	"github.com/mcpblob/mcpblob/core/server/front"
	"github.com/mcpblob/mcpblob/core/server/tracing"
	"github.com/mcpblob/mcpblob/storage"
	"github.com/mcpblob/mcpblob/storage/localfs"
)

// A client's trace context: its trace id, and the span ids it sends as the
// traceparent header and as params._meta.traceparent.
const (
	clientTrace  = "4bf92f3577b34da6a3ce929d0e0e4736"
	headerParent = "00f067aa0ba902b7"
	metaParent   = "b7ad6b7169203331"
)

func traceparent(span string) string { return "00-" + clientTrace + "-" + span + "-01" }

// The secrets of a traced request: no span attribute may carry them.
const (
	apiKey  = "test-api-key-7f3a9c"
	blobKey = "secret-folder/secret-name.bin"
)

var payload = bytes.Repeat([]byte("payload-bytes-"), 1000)

// syncBuffer is a goroutine-safe log sink.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// tracedServer serves backend on a loopback port with tracing into a span
// recorder, API key auth and the access log on.
func tracedServer(t *testing.T, backend storage.Backend) (base string, rec *tracetest.SpanRecorder, logs *syncBuffer) {
	t.Helper()
	rec = tracetest.NewSpanRecorder()
	tp := tracing.New(sdktrace.WithSpanProcessor(rec))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	base, logs = serveTraced(t, backend, tp)
	return base, rec, logs
}

// serveTraced serves backend on a loopback port, traced by tp, with API
// key auth and the access log on.
func serveTraced(t *testing.T, backend storage.Backend, tp *tracing.Provider) (base string, logs *syncBuffer) {
	t.Helper()
	return serveTracedOpts(t, tp, server.Options{Backend: backend})
}

// serveTracedOpts serves opts as serveTraced does.
func serveTracedOpts(t *testing.T, tp *tracing.Provider, opts server.Options) (base string, logs *syncBuffer) {
	t.Helper()
	logs = &syncBuffer{}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(apiKey))
	opts.Tracing, opts.Logger = tp, slog.New(slog.NewTextHandler(logs, nil))
	opts.Auth = server.Auth{Keys: []string{hex.EncodeToString(sum[:]) + " alice"}}
	opts.Front = front.Options{Listen: ln.Addr().String(), AccessLog: true}
	srv, err := server.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	t.Cleanup(func() { _ = srv.Shutdown(context.Background()) })
	return "http://" + ln.Addr().String(), logs
}

func localStore(t *testing.T) storage.Backend {
	t.Helper()
	st, err := localfs.Open(t.TempDir(), localfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

const modernMeta = `"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}`

// uploadBody is a tools/call upload_file of payload under blobKey; meta
// is extra _meta members ("" for none), placed before the arguments
// (metaFirst) or after them. The key comes before the file, so the bytes
// stream to storage while the message arrives.
func uploadBody(meta string, modern, metaFirst bool) string {
	members := meta
	if modern {
		members = strings.TrimPrefix(meta+","+modernMeta, ",")
	}
	args := `"arguments":{"key":"` + blobKey + `","file":"data:application/octet-stream;base64,` +
		base64.StdEncoding.EncodeToString(payload) + `"}`
	m := `"_meta":{` + members + `}`
	params := `"name":"upload_file",` + args + `,` + m
	if metaFirst {
		params = `"name":"upload_file",` + m + `,` + args
	}
	return `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{` + params + `}}`
}

// post sends an MCP POST with the client's traceparent header and
// returns the response (its body read).
func post(t *testing.T, base, body string, header map[string]string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest("POST", base+"/mcp", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
		"Authorization": "Bearer " + apiKey, "traceparent": traceparent(headerParent)} {
		req.Header.Set(k, v)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), `"result"`) || strings.Contains(string(b), `"isError":true`) {
		t.Fatalf("POST /mcp: %d %s", resp.StatusCode, b)
	}
	return resp, string(b)
}

var modernHeaders = map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "upload_file",
	"Mcp-Param-Blob-Key": blobKey}

// initialize opens a 2025-11-25 session and returns the headers of its
// requests.
func initialize(t *testing.T, base string) map[string]string {
	t.Helper()
	resp, _ := post(t, base, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25",`+
		`"capabilities":{},"clientInfo":{"name":"tracing-test","version":"1"}}}`, map[string]string{"traceparent": ""})
	sid := resp.Header.Get("Mcp-Session-Id")
	if sid == "" {
		t.Fatal("initialize gave no session")
	}
	return map[string]string{"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-11-25"}
}

// spanNamed is the one ended span named name, failing the test unless
// there is exactly one.
func spanNamed(t *testing.T, spans []sdktrace.ReadOnlySpan, name string) sdktrace.ReadOnlySpan {
	t.Helper()
	var found []sdktrace.ReadOnlySpan
	for _, s := range spans {
		if s.Name() == name {
			found = append(found, s)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%d spans named %q, want 1; spans: %s", len(found), name, names(spans))
	}
	return found[0]
}

func names(spans []sdktrace.ReadOnlySpan) string {
	var out []string
	for _, s := range spans {
		out = append(out, fmt.Sprintf("%s(%s<-%s)", s.Name(), s.SpanContext().SpanID(), s.Parent().SpanID()))
	}
	return strings.Join(out, " ")
}

// TestSpanTree uploads a file with tools/call upload_file, its bytes
// streaming to storage while the message arrives, in both eras, with
// params._meta.traceparent absent, before the arguments or after them,
// and checks the spans: the HTTP span under the traceparent header, the
// MCP span under _meta's context wherever _meta stands (the local store's
// put ends when the tool commits it, after the message has been read),
// every storage span under the MCP span, the trace id in the access log,
// and no secret in any attribute.
func TestSpanTree(t *testing.T) {
	metaTP := `"traceparent":"` + traceparent(metaParent) + `","tracestate":"vendor=opaque","baggage":"user=someone"`
	for _, tc := range []struct {
		name           string
		modern         bool
		meta           string
		metaFirst      bool
		wantMetaParent bool // the MCP span's parent is _meta's span
		wantMetaLinked bool // else linked to it
	}{
		{"modern/no-meta", true, "", false, false, false},
		{"modern/meta-first", true, metaTP, true, true, false},
		{"modern/meta-last", true, metaTP, false, true, false},
		{"legacy/no-meta", false, "", false, false, false},
		{"legacy/meta-first", false, metaTP, true, true, false},
		{"legacy/meta-last", false, metaTP, false, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base, rec, logs := tracedServer(t, localStore(t))
			header := modernHeaders
			if !tc.modern {
				header = initialize(t, base)
			}
			post(t, base, uploadBody(tc.meta, tc.modern, tc.metaFirst), header)
			checkTree(t, rec.Ended(), tc.wantMetaParent, tc.wantMetaLinked)
			checkNoSecrets(t, rec.Ended())
			httpSpan := spanNamed(t, inTrace(rec.Ended()), "POST mcp")
			if id := httpSpan.SpanContext().TraceID().String(); !strings.Contains(logs.String(), "trace_id="+id) {
				t.Errorf("no access-log line names trace %s:\n%s", id, logs.String())
			}
		})
	}
}

// inTrace keeps the spans of the client's trace.
func inTrace(spans []sdktrace.ReadOnlySpan) []sdktrace.ReadOnlySpan {
	var out []sdktrace.ReadOnlySpan
	for _, s := range spans {
		if s.SpanContext().TraceID().String() == clientTrace {
			out = append(out, s)
		}
	}
	return out
}

func checkTree(t *testing.T, all []sdktrace.ReadOnlySpan, wantMetaParent, wantMetaLinked bool) {
	t.Helper()
	spans := inTrace(all)
	httpSpan := spanNamed(t, spans, "POST mcp")
	if got := httpSpan.Parent().SpanID().String(); got != headerParent || !httpSpan.Parent().IsRemote() {
		t.Errorf("HTTP span's parent %s, want the traceparent header's %s", got, headerParent)
	}
	mcpSpan := spanNamed(t, spans, "tools/call upload_file")
	wantParent := httpSpan.SpanContext().SpanID().String()
	if wantMetaParent {
		wantParent = metaParent
	}
	if got := mcpSpan.Parent().SpanID().String(); got != wantParent {
		t.Errorf("MCP span's parent %s, want %s; spans: %s", got, wantParent, names(spans))
	}
	linked := len(mcpSpan.Links()) == 1 && mcpSpan.Links()[0].SpanContext.SpanID().String() == metaParent
	if linked != wantMetaLinked {
		t.Errorf("MCP span links %v, want a link to _meta's span: %v", mcpSpan.Links(), wantMetaLinked)
	}
	puts := 0
	for _, s := range spans {
		if !strings.HasPrefix(s.Name(), "storage ") {
			continue
		}
		if s.Parent().SpanID() != mcpSpan.SpanContext().SpanID() {
			t.Errorf("%s's parent %s, want the MCP span %s", s.Name(), s.Parent().SpanID(), mcpSpan.SpanContext().SpanID())
		}
		if s.Name() == "storage put" {
			puts++
		}
	}
	if puts != 1 {
		t.Errorf("%d storage put spans, want 1; spans: %s", puts, names(spans))
	}
	attr := map[string]string{}
	for _, kv := range mcpSpan.Attributes() {
		attr[string(kv.Key)] = kv.Value.String()
	}
	if attr["mcp.method.name"] != "tools/call" || attr["mcp.name"] != "upload_file" || attr["mcpblob.outcome"] != "ok" {
		t.Errorf("MCP span attributes %v", attr)
	}
}

// checkNoSecrets fails when a span's name, attribute, event or link
// carries the API key, the blob key, part of the payload or its base64,
// or one of more (a token).
func checkNoSecrets(t *testing.T, spans []sdktrace.ReadOnlySpan, more ...string) {
	t.Helper()
	secrets := append([]string{apiKey, blobKey, "secret-folder", string(payload[:14]), base64.StdEncoding.EncodeToString(payload[:30])}, more...)
	for _, s := range spans {
		texts := []string{s.Name()}
		for _, kv := range s.Attributes() {
			texts = append(texts, string(kv.Key)+"="+kv.Value.String())
		}
		for _, e := range s.Events() {
			texts = append(texts, e.Name)
			for _, kv := range e.Attributes {
				texts = append(texts, kv.Value.String())
			}
		}
		for _, l := range s.Links() {
			for _, kv := range l.Attributes {
				texts = append(texts, kv.Value.String())
			}
		}
		for _, text := range texts {
			for _, secret := range secrets {
				if strings.Contains(text, secret) {
					t.Errorf("span %q carries a secret: %q", s.Name(), text)
				}
			}
		}
	}
}

// TestGatewayUpstream relays a tools/list through a traced gateway to a
// traced mcpblob and checks the upstream call's span: a child of the
// gateway's HTTP span, and the parent of the upstream's HTTP span (the
// gateway sent its trace context on, in place of the client's).
func TestGatewayUpstream(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := tracing.New(sdktrace.WithSpanProcessor(rec))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	upstream, _ := serveTraced(t, localStore(t), tp)
	gw, _ := serveTracedOpts(t, tp, server.Options{Backend: localStore(t), Gateway: gateway.Options{Upstream: upstream + "/mcp", Token: apiKey}})
	post(t, gw, `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{`+modernMeta+`}}}`,
		map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/list"})
	spans := inTrace(rec.Ended())
	var httpSpans []sdktrace.ReadOnlySpan
	for _, s := range spans {
		if s.Name() == "POST mcp" {
			httpSpans = append(httpSpans, s)
		}
	}
	up := spanNamed(t, spans, "mcp upstream")
	if len(httpSpans) != 2 {
		t.Fatalf("%d HTTP spans in the client's trace, want the gateway's and the upstream's: %s", len(httpSpans), names(spans))
	}
	gwSpan, upSpan := httpSpans[0], httpSpans[1]
	if gwSpan.Parent().SpanID().String() != headerParent {
		gwSpan, upSpan = upSpan, gwSpan
	}
	if gwSpan.Parent().SpanID().String() != headerParent || up.Parent().SpanID() != gwSpan.SpanContext().SpanID() ||
		upSpan.Parent().SpanID() != up.SpanContext().SpanID() {
		t.Errorf("want client → gateway HTTP → upstream call → upstream HTTP; spans: %s", names(spans))
	}
	checkNoSecrets(t, spans)
}

// TestTusChunks uploads a blob with tus in two PATCH chunks and checks
// each chunk's span: an HTTP span under the client's traceparent with
// the chunk's byte count, the storage operations it made its children.
func TestTusChunks(t *testing.T) {
	base, rec, _ := tracedServer(t, localStore(t))
	do := func(method, path string, body []byte, hdr map[string]string) *http.Response {
		t.Helper()
		req, err := http.NewRequest(method, base+path, bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range map[string]string{"Tus-Resumable": "1.0.0", "Authorization": "Bearer " + apiKey,
			"traceparent": traceparent(headerParent)} {
			req.Header.Set(k, v)
		}
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	meta := "key " + base64.StdEncoding.EncodeToString([]byte(blobKey))
	r := do("POST", "/v1/tus/", nil, map[string]string{"Upload-Length": fmt.Sprint(len(payload)), "Upload-Metadata": meta})
	loc, err := url.Parse(r.Header.Get("Location"))
	if r.StatusCode != http.StatusCreated || err != nil {
		t.Fatalf("create: %d %v", r.StatusCode, r.Header)
	}
	half := len(payload) / 2
	for _, chunk := range [][2]int{{0, half}, {half, len(payload)}} {
		r = do("PATCH", loc.Path, payload[chunk[0]:chunk[1]], map[string]string{"Content-Type": "application/offset+octet-stream",
			"Upload-Offset": fmt.Sprint(chunk[0])})
		if r.StatusCode != http.StatusNoContent {
			t.Fatalf("PATCH at %d: %d", chunk[0], r.StatusCode)
		}
	}
	spans := inTrace(rec.Ended())
	patches := map[trace.SpanID]bool{}
	for _, s := range spans {
		if strings.HasPrefix(s.Name(), "PATCH ") {
			patches[s.SpanContext().SpanID()] = true
			if in := attrOf(s, "mcpblob.bytes_in"); in != fmt.Sprint(half) {
				t.Errorf("%s: bytes_in %s, want %d", s.Name(), in, half)
			}
		}
	}
	if len(patches) != 2 {
		t.Fatalf("%d PATCH spans, want 2: %s", len(patches), names(spans))
	}
	children := 0
	for _, s := range spans {
		if strings.HasPrefix(s.Name(), "storage ") && patches[s.Parent().SpanID()] {
			children++
		}
	}
	if children < 2 {
		t.Errorf("%d storage spans under the PATCH spans, want at least one each: %s", children, names(spans))
	}
	checkNoSecrets(t, spans)
}

// attrOf is the value of s's attribute key, "" without one.
func attrOf(s sdktrace.ReadOnlySpan, key string) string {
	for _, kv := range s.Attributes() {
		if string(kv.Key) == key {
			return kv.Value.String()
		}
	}
	return ""
}

// TestGatewayDecode follows a gateway's downloadUrl, whose answer the
// gateway decodes from the upstream's base64 resources/read, and checks
// the decode's span: a child of the download's HTTP span, with the bytes
// decoded.
func TestGatewayDecode(t *testing.T) {
	blob := bytes.Repeat([]byte("decoded-bytes-"), 50000)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":1,"result":{"contents":[{"uri":"x:img","mimeType":"image/png","blob":"%s"}]}}`,
			base64.StdEncoding.EncodeToString(blob))
	}))
	t.Cleanup(up.Close)
	rec := tracetest.NewSpanRecorder()
	tp := tracing.New(sdktrace.WithSpanProcessor(rec))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	gw, _ := serveTracedOpts(t, tp, server.Options{Backend: localStore(t), Gateway: gateway.Options{Upstream: up.URL + "/mcp"}})
	_, answer := post(t, gw, `{"jsonrpc":"2.0","id":3,"method":"resources/stream","params":{"uri":"x:img"}}`,
		map[string]string{"Mcp-Session-Id": "up-session"})
	var st struct{ Result struct{ DownloadURL string } }
	if json.Unmarshal([]byte(answer), &st) != nil || st.Result.DownloadURL == "" {
		t.Fatalf("resources/stream: %.300s; want a downloadUrl", answer)
	}
	req, _ := http.NewRequest(http.MethodGet, st.Result.DownloadURL, nil)
	req.Header.Set("traceparent", traceparent(headerParent))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !bytes.Equal(got, blob) {
		t.Fatalf("download: %d, %d bytes, want %d", resp.StatusCode, len(got), len(blob))
	}
	spans := inTrace(rec.Ended())
	decode := spanNamed(t, spans, "decode base64")
	get := spanNamed(t, spans, "GET other")
	if decode.Parent().SpanID() != get.SpanContext().SpanID() || attrOf(decode, "mcpblob.bytes_decoded") != fmt.Sprint(len(blob)) {
		t.Errorf("decode span %s with %s bytes, want under the download's span with %d; spans: %s",
			decode.Parent().SpanID(), attrOf(decode, "mcpblob.bytes_decoded"), len(blob), names(spans))
	}
	_, tok, _ := strings.Cut(st.Result.DownloadURL, "/g/")
	checkNoSecrets(t, spans, tok, "decoded-bytes-", "x:img")
}
