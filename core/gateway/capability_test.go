package gateway

import (
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpblob/mcpblob/core/gateway/wire"
)

const (
	initLegacy = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25",` +
		`"capabilities":{"resourceStreaming":{}},"clientInfo":{"name":"t","version":"1"}}}`
	initNoStream = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25",` +
		`"capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	discover = `{"jsonrpc":"2.0","id":"d","method":"server/discover","params":{"_meta":{` +
		`"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"resourceStreaming":{}}}}}`
)

// capsUpstream answers initialize and server/discover with caps (as JSON,
// or SSE after a priming event and a log notification when sse).
func capsUpstream(t *testing.T, caps string, sse bool) *httptest.Server {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		method, id, _ := wire.PeekMessage(b)
		msg := `{"jsonrpc":"2.0","id":` + string(id) + `,"result":{"protocolVersion":"2025-11-25","capabilities":` + caps +
			`,"serverInfo":{"name":"up","version":"1"}}}`
		if method == "server/discover" {
			msg = `{"jsonrpc":"2.0","id":` + string(id) + `,"result":{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":` + caps + `}}`
		}
		w.Header().Set("Mcp-Session-Id", "s1")
		if r.Header.Get("Accept-Encoding") == "br" {
			w.Header().Set("Content-Encoding", "br") // a test upstream that would compress
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, "\x0b compressed, not JSON")
			return
		}
		if sse {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "id: p1\ndata: \n\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":\"hi\"}}\n\nid: e2\nevent: message\ndata: "+msg+"\n\n")
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, msg)
	}))
	t.Cleanup(up.Close)
	return up
}

// capsOf returns the capabilities of the response in an answer (JSON, or
// the SSE event that carries a result).
func capsOf(t *testing.T, b []byte) map[string]any {
	t.Helper()
	msg := b
	if strings.Contains(string(b), "data:") {
		for line := range strings.SplitSeq(string(b), "\n") {
			if d, ok := strings.CutPrefix(line, "data: "); ok && strings.Contains(d, `"result"`) {
				msg = []byte(d)
			}
		}
	}
	var m struct {
		Result struct {
			Capabilities map[string]any `json:"capabilities"`
		} `json:"result"`
	}
	if err := json.Unmarshal(msg, &m); err != nil {
		t.Fatalf("answer %q: %v", b, err)
	}
	return m.Result.Capabilities
}

func TestCapabilityAdded(t *testing.T) {
	for _, sse := range []bool{false, true} {
		up := capsUpstream(t, `{"resources":{"subscribe":true},"tools":{}}`, sse)
		g := newGateway(t, up.URL, nil)
		gw := serveGateway(t, g)
		for _, body := range []string{initLegacy, discover} {
			resp, b := post(t, gw.URL, map[string]string{"Accept-Encoding": "br"}, body)
			res, _ := capsOf(t, b)["resources"].(map[string]any)
			if resp.StatusCode != 200 || res["stream"] != true || res["subscribe"] != true || resp.Header.Get("Mcp-Session-Id") != "s1" {
				t.Errorf("sse=%v: %d %s: want resources.stream added beside subscribe", sse, resp.StatusCode, b)
			}
			if sse && !strings.HasPrefix(string(b), "id: p1\ndata: \n\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\"") {
				t.Errorf("the events before the response changed: %q", b)
			}
			if sse && !strings.Contains(string(b), "id: e2\nevent: message\ndata: {") {
				t.Errorf("the response event lost its fields: %q", b)
			}
		}
		if g.streams.Load() != streamsNotOffered {
			t.Errorf("the gateway did not learn the upstream offers no resources/stream")
		}
	}
}

func TestCapabilityUntouched(t *testing.T) {
	for _, c := range []struct {
		name, caps, body string
		offered          int32
	}{
		{"client did not declare", `{"resources":{}}`, initNoStream, streamsUnknown},
		{"upstream streams", `{"resources":{"stream":true}}`, initLegacy, streamsOffered},
		{"no resources", `{"tools":{}}`, initLegacy, streamsNotOffered},
	} {
		up := capsUpstream(t, c.caps, true)
		_, want := post(t, up.URL, nil, c.body)
		g := newGateway(t, up.URL, nil)
		_, got := post(t, serveGateway(t, g).URL, nil, c.body)
		if string(got) != string(want) {
			t.Errorf("%s: answer changed:\n got %q\nwant %q", c.name, got, want)
		}
		if g.streams.Load() != c.offered {
			t.Errorf("%s: learnt %d, want %d", c.name, g.streams.Load(), c.offered)
		}
	}
}

func TestOwnStreamDownload(t *testing.T) {
	blob := make([]byte, 300<<10)
	for i := range blob {
		blob[i] = byte(i * 7)
	}
	var readHeaders http.Header
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		method, _, _ := wire.PeekMessage(b)
		if method != "resources/read" {
			t.Errorf("the upstream got %s: resources/stream must not reach it", method)
			return
		}
		readHeaders = r.Header.Clone()
		w.Header().Set("Content-Type", "application/json")
		if strings.Contains(string(b), "missing") {
			io.WriteString(w, `{"jsonrpc":"2.0","id":1,"error":{"code":-32002,"message":"Resource not found"}}`)
			return
		}
		io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{"contents":[{"uri":"file:///a.png","mimeType":"image/png","blob":"`+
			base64.StdEncoding.EncodeToString(blob)+`"}]}}`)
	}))
	defer up.Close()
	gw := serveGateway(t, newGateway(t, up.URL, nil))

	// 2025-11-25, in the upstream's session.
	hdr := map[string]string{"Mcp-Session-Id": "s1", "MCP-Protocol-Version": "2025-11-25"}
	_, b := post(t, gw.URL, hdr, `{"jsonrpc":"2.0","id":5,"method":"resources/stream","params":{"uri":"file:///a.png"}}`)
	link := downloadURL(t, b, gw.URL)
	resp, err := http.Get(link)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(got) != string(blob) || resp.Header.Get("Content-Type") != "image/png" ||
		resp.Header.Get("MCP-Resource-Uri") != "file:///a.png" || resp.Header.Get("Cache-Control") != "no-store" {
		t.Fatalf("download: %d %v, %d bytes (want %d)", resp.StatusCode, resp.Header, len(got), len(blob))
	}
	if readHeaders.Get("Mcp-Session-Id") != "s1" || readHeaders.Get("Authorization") != "Bearer upstream-secret" {
		t.Errorf("the upstream read went out with %v", readHeaders)
	}

	// 2026-07-28: needs the client capability; the read carries the era's headers.
	modern := `{"jsonrpc":"2.0","id":6,"method":"resources/stream","params":{"uri":"file:///a.png","_meta":{` +
		`"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":%s}}}`
	r, b := post(t, gw.URL, map[string]string{"Mcp-Method": "resources/stream"}, strings.Replace(modern, "%s", `{}`, 1))
	if code, _, _ := rpcErr(t, b); r.StatusCode != 400 || code != -32021 {
		t.Errorf("modern client without resourceStreaming: %d %s, want 400 -32021", r.StatusCode, b)
	}
	_, b = post(t, gw.URL, map[string]string{"Mcp-Method": "resources/stream"}, strings.Replace(modern, "%s", `{"resourceStreaming":{}}`, 1))
	resp, err = http.Get(downloadURL(t, b, gw.URL))
	if err != nil {
		t.Fatal(err)
	}
	got, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(got) != string(blob) || readHeaders.Get("Mcp-Method") != "resources/read" || readHeaders.Get("Mcp-Name") != "file:///a.png" ||
		readHeaders.Get("Mcp-Protocol-Version") != "2026-07-28" {
		t.Errorf("modern download: %d bytes; upstream read headers %v", len(got), readHeaders)
	}

	// A resource the upstream does not have: 404 before any byte.
	_, b = post(t, gw.URL, hdr, `{"jsonrpc":"2.0","id":7,"method":"resources/stream","params":{"uri":"file:///missing"}}`)
	resp, _ = http.Get(downloadURL(t, b, gw.URL))
	resp.Body.Close()
	if resp.StatusCode != 404 {
		t.Errorf("missing resource: %d, want 404", resp.StatusCode)
	}
	// A forged link.
	resp, _ = http.Get(gw.URL + DownloadPrefix + "forged")
	resp.Body.Close()
	if resp.StatusCode != 401 {
		t.Errorf("forged link: %d, want 401", resp.StatusCode)
	}
}

// downloadURL returns the downloadUrl of a resources/stream answer, on the
// test server's address.
func downloadURL(t *testing.T, b []byte, base string) string {
	t.Helper()
	var m struct {
		Result struct {
			DownloadURL string `json:"downloadUrl"`
		} `json:"result"`
	}
	if err := json.Unmarshal(b, &m); err != nil || !strings.HasPrefix(m.Result.DownloadURL, "http://gateway.test/g/") {
		t.Fatalf("not a downloadUrl answer: %s", b)
	}
	return base + strings.TrimPrefix(m.Result.DownloadURL, "http://gateway.test")
}
