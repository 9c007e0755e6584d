package server

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcpblob/mcpblob/core/auth"
	"github.com/mcpblob/mcpblob/core/gateway"
	"github.com/mcpblob/mcpblob/storage"
	"github.com/mcpblob/mcpblob/storage/quota"
)

// gatewayQuota is alice's bytes quota in the gateway quota tests: under
// the 3 MiB blob the upstream answers.
const gatewayQuota = 1 << 20

// quotaGateway starts a gateway server in front of an upstream answering
// every request with a 3 MiB image: its tools/call as JSON, or as SSE when
// the body names "sse"; alice's quota is gatewayQuota bytes.
func quotaGateway(t *testing.T, be storage.Backend, o gateway.Options) (base string, reads *atomic.Int32, logs *logBuffer) {
	img := base64.StdEncoding.EncodeToString(offloadImage(3 << 20))
	reads = &atomic.Int32{}
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		reads.Add(1)
		if bytes.Contains(body, []byte("resources/read")) {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":1,"result":{"contents":[{"uri":"x:img","mimeType":"image/png","blob":"%s"}]}}`, img)
			return
		}
		msg := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"image","data":"%s","mimeType":"image/png"}]}}`, img)
		if bytes.Contains(body, []byte("sse")) {
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, "event: message\ndata: %s\n\n", msg)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, msg)
	}))
	t.Cleanup(up.Close)
	logs = &logBuffer{}
	o.Upstream = up.URL + "/mcp"
	base, _ = startTestServer(t, Options{Backend: be, Gateway: o,
		Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Auth:   Auth{Keys: []string{auth.KeyLine("alice-key", "alice", nil)}},
		Quota:  Quota{Default: auth.Quota{Bytes: gatewayQuota}}})
	return base, reads, logs
}

// nothingStored fails unless alice's namespace holds nothing.
func nothingStored(t *testing.T, be storage.Backend) {
	t.Helper()
	truth, err := quota.Scan(t.Context(), be)
	if err != nil || truth["alice"] != (quota.Usage{}) {
		t.Errorf("stored: %+v %v; want nothing of alice's", truth, err)
	}
}

// TestGatewayOffloadQuota: an offloaded blob past the caller's quota is
// answered in JSON-RPC terms, -32602 with data.reason "quotaExceeded" and
// the figures (as a JSON answer and as an SSE event), logged under ERROR,
// with nothing stored; on the local store and on S3.
func TestGatewayOffloadQuota(t *testing.T) {
	parallel(t)
	for _, tb := range byteplaneBackends() {
		t.Run(tb.name, func(t *testing.T) {
			be := tb.new(t)
			base, _, logs := quotaGateway(t, be, gateway.Options{Offload: gateway.OffloadOptions{Over: 64 << 10}})
			for _, call := range []string{"json", "sse"} {
				body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"shot","arguments":{"as":"` + call + `"}}}`
				resp, b := gwPost(t, base, "alice-key", strings.NewReader(body), -1)
				wantOffloadQuota(t, call, resp, b)
			}
			nothingStored(t, be)
			if s := logs.String(); strings.Contains(s, "level=ERROR") || !strings.Contains(s, "quotaExceeded") {
				t.Errorf("logs: want the refusals at INFO, no ERROR:\n%s", s)
			}
		})
	}
}

func wantOffloadQuota(t *testing.T, call string, resp *http.Response, b []byte) {
	t.Helper()
	msg := b
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		for line := range strings.Lines(string(b)) {
			if data, ok := strings.CutPrefix(line, "data: "); ok {
				msg = []byte(data)
			}
		}
	}
	var m struct {
		Error *struct {
			Code    int
			Message string
			Data    struct {
				Reason, Quota      string
				Limit, Usage, Fits int64
			}
		}
	}
	if json.Unmarshal(msg, &m) != nil || resp.StatusCode != 200 || m.Error == nil || m.Error.Code != -32602 ||
		m.Error.Data.Reason != "quotaExceeded" || m.Error.Data.Quota != "bytes" || m.Error.Data.Limit != gatewayQuota ||
		m.Error.Data.Usage+m.Error.Data.Fits != gatewayQuota || !strings.Contains(m.Error.Message, "bytes quota is 1048576") {
		t.Errorf("%s tools/call past the quota: %d %.400s; want 200, -32602 quotaExceeded naming the bytes quota", call, resp.StatusCode, msg)
	}
}

// TestGatewayStreamCacheQuota: a stream cache entry past the caller's
// quota is not kept, but the download is served whole (every time, from
// the upstream), with a warning only; on the local store and on S3.
func TestGatewayStreamCacheQuota(t *testing.T) {
	parallel(t)
	for _, tb := range byteplaneBackends() {
		t.Run(tb.name, func(t *testing.T) {
			be := tb.new(t)
			base, reads, logs := quotaGateway(t, be, gateway.Options{Cache: gateway.CacheOptions{On: true}})
			want := offloadImage(3 << 20)
			for i := range 2 {
				if resp, b := cacheGet(t, base, "alice-key", nil); resp.StatusCode != 200 || !bytes.Equal(b, want) {
					t.Fatalf("download %d: %d, %d bytes; want the whole blob", i, resp.StatusCode, len(b))
				}
			}
			if n := reads.Load(); n != 2 {
				t.Errorf("the upstream answered %d resources/read; want 2 (nothing cached)", n)
			}
			nothingStored(t, be)
			if s := logs.String(); strings.Contains(s, "level=ERROR") || !strings.Contains(s, "level=WARN") {
				t.Errorf("logs: want a warning, no ERROR:\n%s", s)
			}
		})
	}
}

// TestGatewayFileByReferenceQuota: a file argument delivered by reference
// past the caller's quota is answered -32602 naming the argument and the
// quota (data.reason "quotaExceeded"), not -32603 with a 500; the tool
// never gets the call whole and nothing is stored.
func TestGatewayFileByReferenceQuota(t *testing.T) {
	parallel(t)
	var calls atomic.Int32
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		if bytes.Contains(b, []byte(`"tools/list"`)) {
			io.WriteString(w, `{"jsonrpc":"2.0","id":"mcpblob-gateway-tools-list","result":{"tools":[{"name":"upload","inputSchema":{"type":"object","properties":{"file":{"type":"string","x-mcp-file":{"delivery":"reference"}}}}}]}}`)
			return
		}
		if err == nil { // a request cut short is no call
			calls.Add(1)
		}
		io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`)
	}))
	t.Cleanup(up.Close)
	be := newLocalStore(t)
	base, _ := startTestServer(t, Options{Backend: be, Gateway: gateway.Options{Upstream: up.URL + "/mcp"},
		Auth:  Auth{Keys: []string{auth.KeyLine("alice-key", "alice", nil)}},
		Quota: Quota{Default: auth.Quota{Bytes: gatewayQuota}}})
	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"upload","arguments":{"file":"data:application/pdf;base64,` +
		base64.StdEncoding.EncodeToString(offloadImage(3<<20)) + `"}}}`
	resp, b := gwPost(t, base, "alice-key", strings.NewReader(call), int64(len(call)))
	var m struct {
		Error *struct {
			Code int
			Data struct {
				Argument, Reason, Quota string
				Limit                   int64
			}
		}
	}
	if json.Unmarshal(b, &m) != nil || resp.StatusCode != 200 || m.Error == nil || m.Error.Code != -32602 ||
		m.Error.Data.Argument != "file" || m.Error.Data.Reason != "quotaExceeded" || m.Error.Data.Quota != "bytes" ||
		m.Error.Data.Limit != gatewayQuota {
		t.Errorf("tools/call with a file past the quota: %d %.400s; want 200, -32602 quotaExceeded naming the argument", resp.StatusCode, b)
	}
	if n := calls.Load(); n != 0 {
		t.Errorf("the upstream got %d tools/call whole; want none", n)
	}
	nothingStored(t, be)
}
