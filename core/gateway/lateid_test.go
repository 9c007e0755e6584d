package gateway

import (
	"encoding/base64"
	"io"
	"net/http"
	"strings"
	"testing"
)

// The official TypeScript SDK clients write a request's id after its
// params. A file refused mid-body (past the gateway's peek) is still
// answered for the request's id, which the gateway reads from the rest of
// the body: an id-less error would leave the client waiting for an answer
// to its request until its timeout.
func TestFileArgRefusedForAnIDAfterParams(t *testing.T) {
	up := newFileUpstream(t, `{"maxSize":1048576}`)
	gw := serveGateway(t, newGateway(t, up.URL, nil)).URL
	size := int64(8 << 20)
	prefix := `{"method":"tools/call","params":{"name":"upload","arguments":{"file":"data:application/pdf;base64,`
	suffix := `"}},"jsonrpc":"2.0","id":"req \"7\""}`
	pr, pw := io.Pipe()
	go func() {
		enc := base64.NewEncoder(base64.StdEncoding, pw)
		_, err := io.Copy(enc, pdfPayload(size))
		if err == nil {
			err = enc.Close()
		}
		pw.CloseWithError(err)
	}()
	n := int64(len(prefix) + base64.StdEncoding.EncodedLen(int(size)) + len(suffix))
	resp, b := postCall(t, gw, io.MultiReader(strings.NewReader(prefix), pr, strings.NewReader(suffix)), n)
	fileRefused(t, resp, b, "larger than maxSize 1048576 bytes")
	if !strings.Contains(string(b), `"id":"req \"7\""`) {
		t.Fatalf("refusal %s; want it for the request's id, read after the params", b)
	}
	if up.complete.Load() != 0 {
		t.Fatalf("the upstream got %d whole requests; want none", up.complete.Load())
	}
}

// The same for a 2026-07-28 retry whose file field is refused: the
// TypeScript SDK v2 client writes the retry's id after its params.
func TestElicitRetryRefusedForAnIDAfterParams(t *testing.T) {
	up := newElicitUpstream(t)
	a, b := twoNodes(t, up.URL)
	resp, ans := modernCall(t, a, "", 1)
	sent, _ := up.required.Load().(string)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("input_required answer %d %s", resp.StatusCode, ans)
	}
	key := carrierOf(t, sent, string(ans), `"pick"`)
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}}}}`
	body := `{"method":"tools/call","params":{"name":"upload","arguments":{},"inputResponses":{` + key +
		`:{"action":"accept","content":{"doc":"` + pdfURI(2<<20, false) + `"}}},"requestState":"st-1",` + meta + `},"jsonrpc":"2.0","id":42}`
	resp, ans = post(t, b, map[string]string{"Mcp-Method": "tools/call", "Mcp-Name": "upload", "MCP-Protocol-Version": "2026-07-28"}, body)
	elicitRefused(t, resp.StatusCode, ans, "file is larger than maxSize 1048576 bytes", "pick")
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(ans), `"id":42`) {
		t.Fatalf("refusal %d %s; want HTTP 200 for the retry's id, read after its params", resp.StatusCode, ans)
	}
}
