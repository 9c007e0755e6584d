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
	"sync/atomic"
	"testing"

	"github.com/mcpblob/mcpblob/core/gateway"
	"github.com/mcpblob/mcpblob/storage"
)

// TestGatewayStreamCacheThroughFront: the server's stream cache store
// (its backend through storage/ingest, the caller's namespace) behind the
// real front: the second downloadUrl GET is a 302 to a /d link, whose
// Range, If-Range and ETag the blob service answers, and the upstream is
// read once; on the local store and on S3.
func TestGatewayStreamCacheThroughFront(t *testing.T) {
	parallel(t)
	for _, tb := range byteplaneBackends() {
		t.Run(tb.name, func(t *testing.T) { checkStreamCacheThroughFront(t, tb.new(t)) })
	}
}

func checkStreamCacheThroughFront(t *testing.T, be storage.Backend) {
	blob := offloadImage(3 << 20)
	var reads atomic.Int32
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		reads.Add(1)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":1,"result":{"contents":[{"uri":"x:img","mimeType":"image/png","blob":"%s"}]}}`,
			base64.StdEncoding.EncodeToString(blob))
	}))
	t.Cleanup(up.Close)
	base, _ := startTestServer(t, Options{Backend: be,
		Auth:    Auth{Keys: []string{HashKey("alice-key") + " alice", HashKey("bob-key") + " bob"}},
		Gateway: gateway.Options{Upstream: up.URL + "/mcp", Cache: gateway.CacheOptions{On: true}}})

	if resp, b := cacheGet(t, base, "alice-key", nil); resp.StatusCode != 200 || !bytes.Equal(b, blob) {
		t.Fatalf("first download: %d, %d bytes", resp.StatusCode, len(b))
	}
	resp, b := cacheGet(t, base, "alice-key", map[string]string{"Range": "bytes=100-199"})
	etag := resp.Header.Get("ETag")
	if resp.StatusCode != http.StatusPartialContent || !bytes.Equal(b, blob[100:200]) || etag == "" ||
		!strings.Contains(resp.Request.URL.Path, "/d/") {
		t.Fatalf("second download with Range: %d, %d bytes, ETag %q, from %s; want 206 from a /d link", resp.StatusCode, len(b), etag, resp.Request.URL.Path)
	}
	if resp, b = cacheGet(t, base, "alice-key", map[string]string{"Range": "bytes=0-9", "If-Range": etag}); resp.StatusCode != http.StatusPartialContent || !bytes.Equal(b, blob[:10]) {
		t.Errorf("If-Range with the ETag: %d, %d bytes; want 206", resp.StatusCode, len(b))
	}
	if resp, b = cacheGet(t, base, "alice-key", map[string]string{"Range": "bytes=0-9", "If-Range": `"other"`}); resp.StatusCode != 200 || !bytes.Equal(b, blob) {
		t.Errorf("If-Range with another ETag: %d, %d bytes; want 200 with the whole", resp.StatusCode, len(b))
	}
	if n := reads.Load(); n != 1 {
		t.Errorf("the upstream answered %d resources/read; want 1", n)
	}
	if _, b = cacheGet(t, base, "bob-key", nil); !bytes.Equal(b, blob) || reads.Load() != 2 {
		t.Errorf("bob's download: %d bytes, %d upstream reads; want his own from the upstream", len(b), reads.Load())
	}
	entries, facts := cacheObjects(t, be)
	if len(entries) != 2 || len(facts) != 2 || !strings.Contains(entries[0].Key, "/gateway/cache/") ||
		!strings.HasPrefix(entries[0].Key, ".ns/") || entries[0].MediaType != "image/png" || facts[0].Key != entries[0].Key+factsSuffix {
		t.Errorf("store holds %+v and facts %+v; want one entry and its facts in each principal's namespace", entries, facts)
	}
}

// cacheObjects lists the store: the stream cache's entries and their
// facts objects.
func cacheObjects(t *testing.T, be storage.Backend) (entries, facts []storage.Info) {
	t.Helper()
	page, err := be.List(context.Background(), "", "", 100)
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range page.Items {
		if strings.HasSuffix(it.Key, factsSuffix) {
			facts = append(facts, it)
		} else {
			entries = append(entries, it)
		}
	}
	return entries, facts
}

// cacheGet asks the gateway for principal key's downloadUrl of x:img and
// GETs it (redirects followed) with hdr.
func cacheGet(t *testing.T, base, key string, hdr map[string]string) (*http.Response, []byte) {
	t.Helper()
	_, b := gwPost(t, base, key, strings.NewReader(`{"jsonrpc":"2.0","id":3,"method":"resources/stream","params":{"uri":"x:img"}}`), -1)
	var st struct{ Result struct{ DownloadURL string } }
	if json.Unmarshal(b, &st) != nil || !strings.Contains(st.Result.DownloadURL, "/g/") {
		t.Fatalf("resources/stream: %.300s; want a /g downloadUrl", b)
	}
	req, _ := http.NewRequest(http.MethodGet, st.Result.DownloadURL, nil)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err = io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, b
}

// TestGatewayStreamCacheSingleUse: with single-use downloadUrls, the /d
// link a cached download redirects to serves one response too.
func TestGatewayStreamCacheSingleUse(t *testing.T) {
	parallel(t)
	blob := offloadImage(1 << 20)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":1,"result":{"contents":[{"uri":"x:img","blob":"%s"}]}}`,
			base64.StdEncoding.EncodeToString(blob))
	}))
	t.Cleanup(up.Close)
	base, _ := startTestServer(t, Options{Backend: newLocalStore(t), Auth: Auth{Keys: []string{HashKey("alice-key") + " alice"}},
		Gateway: gateway.Options{Upstream: up.URL + "/mcp", SingleUse: true, Cache: gateway.CacheOptions{On: true}}})
	cacheGet(t, base, "alice-key", nil)
	resp, b := cacheGet(t, base, "alice-key", nil)
	if resp.StatusCode != 200 || !bytes.Equal(b, blob) || !strings.Contains(resp.Request.URL.Path, "/d/") ||
		resp.Header.Get("Content-Type") != "image/png" {
		t.Fatalf("cached download: %d, %d bytes of %q from %s", resp.StatusCode, len(b), resp.Header.Get("Content-Type"), resp.Request.URL.Path)
	}
	again, err := http.Get(resp.Request.URL.String())
	if err != nil {
		t.Fatal(err)
	}
	again.Body.Close()
	if again.StatusCode != http.StatusNotFound {
		t.Errorf("the /d link a second time: %d, want 404 (single use)", again.StatusCode)
	}
}
