package gateway

import (
	"encoding/base64"
	"io"
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
