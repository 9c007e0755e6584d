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
	"time"

	"github.com/mcpblob/mcpblob/core/gateway"
	"github.com/mcpblob/mcpblob/storage"
)

// TestGatewayStreamCacheFreshness: an entry's facts (its expiry from the
// answer's ttlMs, the resource's version) go through the real store, on
// the local store and on S3, in 2026-07-28: ttlMs 0 leaves no object;
// ttlMs 1 expires the entry before the next download; a relayed
// resources/list showing another lastModified drops it.
func TestGatewayStreamCacheFreshness(t *testing.T) {
	parallel(t)
	for _, tb := range byteplaneBackends() {
		t.Run(tb.name, func(t *testing.T) { checkStreamCacheFreshness(t, tb.new(t)) })
	}
}

func checkStreamCacheFreshness(t *testing.T, be storage.Backend) {
	blob := offloadImage(256 << 10)
	var reads atomic.Int32
	var ttl, lastModified atomic.Value
	ttl.Store(`"ttlMs":0,`)
	lastModified.Store("2026-11-27T08:00:00Z")
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		lm := lastModified.Load().(string)
		if bytes.Contains(b, []byte(`"resources/list"`)) {
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":4,"result":{"resources":[{"uri":"x:img","name":"img","annotations":{"lastModified":%q}}]}}`, lm)
			return
		}
		reads.Add(1)
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":1,"result":{%s"contents":[{"uri":"x:img","annotations":{"lastModified":%q},"blob":"%s"}]}}`,
			ttl.Load(), lm, base64.StdEncoding.EncodeToString(blob))
	}))
	t.Cleanup(up.Close)
	base, _ := startTestServer(t, Options{Backend: be, Auth: Auth{Keys: []string{HashKey("alice-key") + " alice"}},
		Gateway: gateway.Options{Upstream: up.URL + "/mcp", Cache: gateway.CacheOptions{On: true}}})
	download := func(wantReads int32, what string) {
		t.Helper()
		if resp, b := modernCacheGet(t, base, "alice-key"); resp.StatusCode != 200 || !bytes.Equal(b, blob) {
			t.Fatalf("%s: %d, %d bytes", what, resp.StatusCode, len(b))
		}
		if n := reads.Load(); n != wantReads {
			t.Fatalf("%s: the upstream answered %d reads, want %d", what, n, wantReads)
		}
	}
	download(1, "ttlMs 0")
	if entries, facts := cacheObjects(t, be); len(entries)+len(facts) != 0 {
		t.Fatalf("ttlMs 0 left %+v %+v in the store", entries, facts)
	}
	ttl.Store(`"ttlMs":1,`)
	download(2, "ttlMs 1")
	time.Sleep(10 * time.Millisecond)
	download(3, "ttlMs 1, later")
	ttl.Store(`"ttlMs":3600000,`)
	download(4, "ttlMs 1h")
	download(4, "ttlMs 1h, from the cache")
	lastModified.Store("2026-11-27T09:00:00Z")
	gwPost(t, base, "alice-key", strings.NewReader(`{"jsonrpc":"2.0","id":4,"method":"resources/list"}`), -1)
	download(5, "after a list showing a new lastModified")
	download(5, "the new version, from the cache")
}

// modernCacheGet is cacheGet in 2026-07-28.
func modernCacheGet(t *testing.T, base, key string) (*http.Response, []byte) {
	t.Helper()
	_, b := gwPost(t, base, key, strings.NewReader(`{"jsonrpc":"2.0","id":3,"method":"resources/stream","params":{"uri":"x:img",`+
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"resourceStreaming":{}}}}}`), -1)
	var st struct{ Result struct{ DownloadURL string } }
	if json.Unmarshal(b, &st) != nil || !strings.Contains(st.Result.DownloadURL, "/g/") {
		t.Fatalf("resources/stream: %.300s; want a /g downloadUrl", b)
	}
	resp, err := http.Get(st.Result.DownloadURL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if b, err = io.ReadAll(resp.Body); err != nil {
		t.Fatal(err)
	}
	return resp, b
}

// TestGatewayStreamCacheFactsOfOlderEntry: facts written for an entry
// that was replaced since (another ETag) read as none.
func TestGatewayStreamCacheFactsOfOlderEntry(t *testing.T) {
	parallel(t)
	be := newLocalStore(t)
	_, s := startTestServer(t, Options{Backend: be, Gateway: gateway.Options{Upstream: "http://127.0.0.1:1/mcp"}})
	cs := s.streamCache(gateway.Options{Cache: gateway.CacheOptions{On: true}})
	ctx := context.Background()
	k := gateway.CacheKey{Principal: "alice", Upstream: "u", URI: "x:a"}
	put := func(body string, facts gateway.CacheFacts) {
		w, err := cs.Create(ctx, k, "text/plain")
		if err == nil {
			_, err = io.WriteString(w, body)
		}
		if err == nil {
			err = w.Commit(ctx, facts)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	facts := gateway.CacheFacts{Expires: time.Now().Add(time.Minute).Truncate(time.Millisecond), Version: "lm:1"}
	put("one", facts)
	if _, info, err := cs.Link(ctx, k, false); err != nil || !info.Expires.Equal(facts.Expires) || info.Version != "lm:1" || info.Size != 3 {
		t.Fatalf("Link: %+v (%v); want the facts committed", info, err)
	}
	key := cs.(*cacheStore).key(k)
	w, err := be.Create(ctx, key, storage.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(w, "replaced")
	if _, err := w.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if _, info, err := cs.Link(ctx, k, false); err != nil || !info.Expires.IsZero() || info.Version != "" || info.Size != 8 {
		t.Errorf("Link after a replacement: %+v (%v); want no facts", info, err)
	}
	if err := cs.Delete(ctx, k); err != nil {
		t.Fatal(err)
	}
	if entries, facts := cacheObjects(t, be); len(entries)+len(facts) != 0 {
		t.Errorf("Delete left %+v %+v", entries, facts)
	}
}
