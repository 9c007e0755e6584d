package server

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpblob/mcpblob/core/gateway"
	"github.com/mcpblob/mcpblob/storage"
)

// offloadImage is a PNG-looking image of n bytes: the magic number, then a
// pattern.
func offloadImage(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i * 7 >> 2)
	}
	copy(b, "\x89PNG\r\n\x1a\n")
	return b
}

// TestGatewayOffloadThroughFront: the server's offload store (its backend
// through storage/ingest, the caller's namespace, /d links) behind the
// real front, on the local store and on S3.
func TestGatewayOffloadThroughFront(t *testing.T) {
	parallel(t)
	for _, tb := range byteplaneBackends() {
		t.Run(tb.name, func(t *testing.T) { checkOffloadThroughFront(t, tb.new(t)) })
	}
}

func checkOffloadThroughFront(t *testing.T, be storage.Backend) {
	img := offloadImage(3 << 20)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		// data before mimeType, as the official SDKs write it: the stored
		// type is sniffed.
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"image","data":"%s","mimeType":"image/png"}]}}`,
			base64.StdEncoding.EncodeToString(img))
	}))
	t.Cleanup(up.Close)
	base, _ := startTestServer(t, Options{Backend: be,
		Auth:    Auth{Keys: []string{HashKey("alice-key") + " alice", HashKey("bob-key") + " bob"}},
		Gateway: gateway.Options{Upstream: up.URL + "/mcp", Offload: gateway.OffloadOptions{Over: 1 << 20}}})

	_, b := gwPost(t, base, "alice-key", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"shot"}}`), -1)
	var call struct {
		Result struct {
			Content []struct{ Type, URI, MimeType string }
		}
	}
	if json.Unmarshal(b, &call) != nil || len(call.Result.Content) != 1 || call.Result.Content[0].Type != "resource_link" {
		t.Fatalf("tools/call through the gateway: %.300s; want the image as a resource_link", b)
	}
	uri := call.Result.Content[0].URI

	read := `{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"` + uri + `"}}`
	_, b = gwPost(t, base, "alice-key", strings.NewReader(read), -1)
	var res struct {
		Result struct {
			Contents []struct{ URI, MimeType, Blob string }
		}
	}
	if json.Unmarshal(b, &res) != nil || len(res.Result.Contents) != 1 {
		t.Fatalf("resources/read: %.300s", b)
	}
	got, _ := base64.StdEncoding.DecodeString(res.Result.Contents[0].Blob)
	if c := res.Result.Contents[0]; !bytes.Equal(got, img) || c.MimeType != "image/png" || c.URI != uri {
		t.Errorf("resources/read: %d bytes of type %q: not the upstream's image", len(got), c.MimeType)
	}

	checkOffloadLink(t, base, uri, img)

	_, b = gwPost(t, base, "bob-key", strings.NewReader(read), -1)
	if !strings.Contains(string(b), `"code":-32002`) {
		t.Errorf("bob read alice's offloaded image: %.300s; want -32002", b)
	}
	page, err := be.List(context.Background(), "", "", 100)
	if err != nil || len(page.Items) != 1 || !strings.HasPrefix(page.Items[0].Key, ".ns/") ||
		!strings.Contains(page.Items[0].Key, "/gateway/offload/") {
		t.Errorf("store holds %+v (%v); want the one image in alice's namespace", page.Items, err)
	}
}

// checkOffloadLink reads uri by resources/stream's downloadUrl (a /d link):
// a range, then the whole.
func checkOffloadLink(t *testing.T, base, uri string, img []byte) {
	t.Helper()
	_, b := gwPost(t, base, "alice-key", strings.NewReader(`{"jsonrpc":"2.0","id":3,"method":"resources/stream","params":{"uri":"`+uri+`"}}`), -1)
	var st struct{ Result struct{ DownloadURL string } }
	if json.Unmarshal(b, &st) != nil || !strings.Contains(st.Result.DownloadURL, "/d/") {
		t.Fatalf("resources/stream: %.300s; want a /d downloadUrl", b)
	}
	req, _ := http.NewRequest(http.MethodGet, st.Result.DownloadURL, nil)
	req.Header.Set("Range", "bytes=100-199")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	part, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusPartialContent || !bytes.Equal(part, img[100:200]) {
		t.Errorf("range of the downloadUrl: %d, %d bytes", resp.StatusCode, len(part))
	}
	resp, err = http.Get(st.Result.DownloadURL)
	if err != nil {
		t.Fatal(err)
	}
	whole, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !bytes.Equal(whole, img) {
		t.Errorf("downloadUrl: %d, %d bytes: not the upstream's image", resp.StatusCode, len(whole))
	}
}
