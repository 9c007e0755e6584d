package gateway

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpblob/mcpblob/storage/storagetest"
)

// diskCache is a CacheStore on a folder, its links served by a file server
// (Range, If-Range, ETag from net/http's ServeContent): the tests' stand-in
// for core/server's store and /d links.
type diskCache struct {
	dir   string
	files *httptest.Server
}

func newDiskCache(t *testing.T) *diskCache {
	c := &diskCache{dir: t.TempDir()}
	c.files = httptest.NewServer(http.StripPrefix("/f/", http.FileServer(http.Dir(c.dir))))
	t.Cleanup(c.files.Close)
	return c
}

func (c *diskCache) name(k CacheKey) string {
	sum := sha256.Sum256([]byte(k.Principal + "\x00" + k.Upstream + "\x00" + k.URI))
	return hex.EncodeToString(sum[:])
}

// entries counts the committed entries.
func (c *diskCache) entries(t *testing.T) int {
	des, err := os.ReadDir(c.dir)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, de := range des {
		if !strings.HasSuffix(de.Name(), ".part") && !strings.HasSuffix(de.Name(), ".facts") {
			n++
		}
	}
	return n
}

func (c *diskCache) Create(_ context.Context, k CacheKey, _ string) (CacheWriter, error) {
	f, err := os.CreateTemp(c.dir, "*.part")
	if err != nil {
		return nil, err
	}
	return &diskEntry{f: f, final: filepath.Join(c.dir, c.name(k))}, nil
}

func (c *diskCache) Link(_ context.Context, k CacheKey, _ bool) (string, CacheInfo, error) {
	fi, err := os.Stat(filepath.Join(c.dir, c.name(k)))
	if err != nil {
		return "", CacheInfo{}, ErrOffloadNotFound
	}
	info := CacheInfo{Size: fi.Size(), Stored: fi.ModTime()}
	if b, err := os.ReadFile(filepath.Join(c.dir, c.name(k)+".facts")); err == nil {
		json.Unmarshal(b, &info.CacheFacts)
	}
	return c.files.URL + "/f/" + c.name(k), info, nil
}

func (c *diskCache) Delete(_ context.Context, k CacheKey) error {
	if err := os.Remove(filepath.Join(c.dir, c.name(k))); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	os.Remove(filepath.Join(c.dir, c.name(k)+".facts"))
	return nil
}

type diskEntry struct {
	f     *os.File
	final string
}

func (e *diskEntry) Write(p []byte) (int, error) { return e.f.Write(p) }

func (e *diskEntry) Commit(_ context.Context, facts CacheFacts) error {
	err := e.f.Close()
	if err == nil {
		err = os.Rename(e.f.Name(), e.final)
	}
	if b, _ := json.Marshal(facts); err == nil {
		err = os.WriteFile(e.final+".facts", b, 0o600)
	}
	return err
}

func (e *diskEntry) Abort() { e.f.Close(); os.Remove(e.f.Name()) }

// cacheUpstream answers resources/read of x:big with size pattern bytes
// (broken as brokenAt says, when set) and counts the reads; any other
// request is answered with an SSE stream holding a
// notifications/resources/updated for x:big, then an empty result.
type cacheUpstream struct {
	*httptest.Server
	reads    atomic.Int32
	brokenAt atomic.Int64 // > 0: the body ends after this many base64 bytes
	// halfway, when set, is closed once half the blob is sent; the rest
	// waits for hold to close.
	halfway, hold chan struct{}
}

func newCacheUpstream(t *testing.T, size int64) *cacheUpstream {
	u := &cacheUpstream{}
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if !bytes.Contains(body, []byte(`"resources/read"`)) {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/resources/updated\",\"params\":{\"uri\":\"x:big\"}}\n\n")
			io.WriteString(w, "data: {\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{}}\n\n")
			return
		}
		u.reads.Add(1)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{"contents":[{"uri":"x:big","mimeType":"application/x-test","blob":"`)
		var dst io.Writer = w
		if at := u.brokenAt.Load(); at > 0 {
			dst = &cutWriter{w: w, left: at}
		}
		enc := base64.NewEncoder(base64.StdEncoding, dst)
		half := size / 2 / 3 * 3
		if u.hold == nil {
			half = size
		}
		io.CopyBuffer(enc, &patternReader{n: half}, make([]byte, 48<<10))
		if u.hold != nil {
			w.(http.Flusher).Flush()
			close(u.halfway)
			<-u.hold
			u.hold = nil
			io.CopyBuffer(enc, &patternReader{i: half, n: size}, make([]byte, 48<<10))
		}
		enc.Close()
		if u.brokenAt.Load() > 0 {
			panic(http.ErrAbortHandler) // the body ends early
		}
		io.WriteString(w, `"}]}}`)
	}))
	t.Cleanup(u.Close)
	return u
}

// cutWriter writes its first left bytes, then swallows the rest.
type cutWriter struct {
	w    io.Writer
	left int64
}

func (c *cutWriter) Write(p []byte) (int, error) {
	k := min(int64(len(p)), c.left)
	if k > 0 {
		if _, err := c.w.Write(p[:k]); err != nil {
			return 0, err
		}
		c.left -= k
	}
	return len(p), nil
}

// servePrincipals serves g as serveGateway does, and returns its URL.
func servePrincipals(t *testing.T, g *Gateway) string { return serveGateway(t, g).URL }

// cachedGateway is a gateway with a stream cache on dc in front of up.
func cachedGateway(t *testing.T, up string, dc *diskCache, ttl time.Duration) string {
	return servePrincipals(t, newGateway(t, up, func(o *Options) {
		o.Cache = CacheOptions{On: true, Store: dc, TTL: ttl}
	}))
}

// linkFor asks the gateway for principal's downloadUrl of x:big.
func linkFor(t *testing.T, gw, principal string) string {
	_, b := post(t, gw, map[string]string{"Mcp-Session-Id": "s", "X-Principal": principal},
		`{"jsonrpc":"2.0","id":9,"method":"resources/stream","params":{"uri":"x:big"}}`)
	return downloadURL(t, b, gw)
}

// fetch GETs link (redirects followed) with hdr and returns the answer.
func fetch(t *testing.T, link string, hdr map[string]string) (*http.Response, []byte, error) {
	req, _ := http.NewRequest(http.MethodGet, link, nil)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp, b, err
}

func pattern(size int64) []byte {
	b, _ := io.ReadAll(&patternReader{n: size})
	return b
}

func TestStreamCacheServesSecondDownload(t *testing.T) {
	const size = 3 << 20
	up, dc := newCacheUpstream(t, size), newDiskCache(t)
	gw := cachedGateway(t, up.URL, dc, time.Hour)
	want := pattern(size)
	if resp, b, err := fetch(t, linkFor(t, gw, "alice"), nil); err != nil || resp.StatusCode != 200 || !bytes.Equal(b, want) {
		t.Fatalf("first download: %d, %d bytes (%v)", resp.StatusCode, len(b), err)
	}
	if dc.entries(t) != 1 {
		t.Fatalf("after a clean download the cache holds %d entries, want 1", dc.entries(t))
	}
	resp, b, err := fetch(t, linkFor(t, gw, "alice"), map[string]string{"Range": "bytes=1000-1999"})
	if err != nil || resp.StatusCode != http.StatusPartialContent || !bytes.Equal(b, want[1000:2000]) {
		t.Fatalf("second download with Range: %d, %d bytes (%v), want 206 with bytes 1000-1999", resp.StatusCode, len(b), err)
	}
	if resp, b, _ = fetch(t, linkFor(t, gw, "alice"), nil); !bytes.Equal(b, want) {
		t.Fatalf("third download: %d, %d bytes, not the resource", resp.StatusCode, len(b))
	}
	if n := up.reads.Load(); n != 1 {
		t.Errorf("the upstream answered %d resources/read; want 1 (later downloads from the cache)", n)
	}
}

func TestStreamCacheRedirects(t *testing.T) {
	up, dc := newCacheUpstream(t, 1<<20), newDiskCache(t)
	gw := cachedGateway(t, up.URL, dc, time.Hour)
	fetch(t, linkFor(t, gw, "alice"), nil)
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Get(linkFor(t, gw, "alice"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound || !strings.HasPrefix(resp.Header.Get("Location"), dc.files.URL) ||
		resp.Header.Get("MCP-Resource-Uri") != "x:big" || resp.Header.Get("Cache-Control") != "no-store" {
		t.Errorf("cached download: %d Location %q, headers %v; want a 302 to the store's link", resp.StatusCode, resp.Header.Get("Location"), resp.Header)
	}
}

func TestStreamCacheBrokenUpstreamStoresNothing(t *testing.T) {
	for _, at := range []int64{10, 2 << 20} { // before the first byte, halfway
		up, dc := newCacheUpstream(t, 3<<20), newDiskCache(t)
		up.brokenAt.Store(at)
		gw := cachedGateway(t, up.URL, dc, time.Hour)
		resp, b, err := fetch(t, linkFor(t, gw, "alice"), nil)
		if err == nil && resp.StatusCode == 200 && len(b) == 3<<20 {
			t.Fatalf("cut at %d: a whole-looking answer", at)
		}
		des, _ := os.ReadDir(dc.dir)
		if len(des) != 0 {
			t.Errorf("cut at %d: the cache folder holds %d files, want none", at, len(des))
		}
		up.brokenAt.Store(0)
		fetch(t, linkFor(t, gw, "alice"), nil)
		if n := up.reads.Load(); n != 2 {
			t.Errorf("cut at %d: the upstream answered %d reads, want 2 (the next download goes upstream)", at, n)
		}
	}
}

func TestStreamCacheUpdatedInvalidates(t *testing.T) {
	up, dc := newCacheUpstream(t, 1<<20), newDiskCache(t)
	gw := cachedGateway(t, up.URL, dc, time.Hour)
	fetch(t, linkFor(t, gw, "alice"), nil)
	fetch(t, linkFor(t, gw, "alice"), nil)
	if n := up.reads.Load(); n != 1 {
		t.Fatalf("before the notification: %d reads, want 1", n)
	}
	// Another principal's stream carries the notification: alice's entry stays.
	post(t, gw, map[string]string{"Mcp-Session-Id": "s", "X-Principal": "bob"}, `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"touch"}}`)
	fetch(t, linkFor(t, gw, "alice"), nil)
	if n := up.reads.Load(); n != 1 {
		t.Fatalf("after bob's notification: %d reads, want 1", n)
	}
	resp, b := post(t, gw, map[string]string{"Mcp-Session-Id": "s"}, `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"touch"}}`)
	if !bytes.Contains(b, []byte("notifications/resources/updated")) || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("the SSE answer was not relayed: %s", b)
	}
	if dc.entries(t) != 0 {
		t.Errorf("after resources/updated the cache holds %d entries", dc.entries(t))
	}
	fetch(t, linkFor(t, gw, "alice"), nil)
	if n := up.reads.Load(); n != 2 {
		t.Errorf("after the notification: %d reads, want 2 (the next download goes upstream)", n)
	}
}

func TestStreamCachePerPrincipal(t *testing.T) {
	up, dc := newCacheUpstream(t, 1<<20), newDiskCache(t)
	gw := cachedGateway(t, up.URL, dc, time.Hour)
	fetch(t, linkFor(t, gw, "alice"), nil)
	_, b, _ := fetch(t, linkFor(t, gw, "bob"), nil)
	if n := up.reads.Load(); n != 2 || !bytes.Equal(b, pattern(1<<20)) {
		t.Errorf("bob's download: %d reads, want 2 (alice's entry is not his)", n)
	}
	if dc.entries(t) != 2 {
		t.Errorf("%d entries, want one per principal", dc.entries(t))
	}
}

func TestStreamCacheTTL(t *testing.T) {
	up, dc := newCacheUpstream(t, 1<<20), newDiskCache(t)
	gw := cachedGateway(t, up.URL, dc, time.Nanosecond)
	fetch(t, linkFor(t, gw, "alice"), nil)
	fetch(t, linkFor(t, gw, "alice"), nil)
	if n := up.reads.Load(); n != 2 {
		t.Errorf("an expired entry: %d reads, want 2", n)
	}
}

func TestStreamCacheTeeMemoryFlat(t *testing.T) {
	size := int64(64 << 20)
	if testing.Short() || raceEnabled {
		size = 8 << 20
	}
	up, dc := newCacheUpstream(t, size), newDiskCache(t)
	gw := cachedGateway(t, up.URL, dc, time.Hour)
	link := linkFor(t, gw, "alice")
	heap := storagetest.StartHeapMonitor()
	resp, err := http.Get(link)
	if err != nil {
		t.Fatal(err)
	}
	n, err := io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	grew := heap.Stop()
	if err != nil || n != size || dc.entries(t) != 1 {
		t.Fatalf("%d of %d bytes (%v), %d entries", n, size, err, dc.entries(t))
	}
	if grew > 8<<20 {
		t.Errorf("heap grew %d bytes teeing %d into the cache; bound 8 MiB", grew, size)
	}
	t.Logf("%d MiB decoded and teed into the cache, heap grew %.2f MiB", size>>20, float64(grew)/(1<<20))
}

func TestStreamCacheUpdatedDuringDownload(t *testing.T) {
	// A notification that comes while a download is being stored: the
	// bytes may be the old version's, so nothing is committed.
	up, dc := newCacheUpstream(t, 2<<20), newDiskCache(t)
	up.halfway, up.hold = make(chan struct{}), make(chan struct{})
	gw := cachedGateway(t, up.URL, dc, time.Hour)
	link := linkFor(t, gw, "alice")
	done := make(chan []byte)
	go func() {
		resp, err := http.Get(link)
		if err != nil {
			done <- nil
			return
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		done <- b
	}()
	<-up.halfway
	post(t, gw, map[string]string{"Mcp-Session-Id": "s"}, `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"touch"}}`)
	close(up.hold)
	if b := <-done; !bytes.Equal(b, pattern(2<<20)) {
		t.Fatalf("the download: %d bytes, not the resource", len(b))
	}
	if n := dc.entries(t); n != 0 {
		t.Errorf("a download that overlapped resources/updated left %d entries; want none", n)
	}
	fetch(t, linkFor(t, gw, "alice"), nil)
	if n := up.reads.Load(); n != 2 {
		t.Errorf("%d reads, want 2 (the next download goes upstream)", n)
	}
}

func TestStreamCacheNonBlobStoresNothing(t *testing.T) {
	// Not base64 from the start (502), and halfway (a cut response).
	for _, at := range []int{1, 3 << 20} {
		dc := newDiskCache(t)
		gw := cachedGateway(t, readUpstream(t, 4<<20, false, at).URL, dc, time.Hour)
		resp, b, err := fetch(t, linkFor(t, gw, "alice"), nil)
		if err == nil && resp.StatusCode == 200 {
			t.Errorf("corrupt at %d: %d, %d bytes, a clean answer", at, resp.StatusCode, len(b))
		}
		if des, _ := os.ReadDir(dc.dir); len(des) != 0 {
			t.Errorf("corrupt at %d: %d files in the cache folder, want none", at, len(des))
		}
	}
	// An answer with no contents: 502, nothing stored.
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{"contents":[]}}`)
	}))
	t.Cleanup(up.Close)
	dc := newDiskCache(t)
	resp, b, _ := fetch(t, linkFor(t, cachedGateway(t, up.URL, dc, time.Hour), "alice"), nil)
	if resp.StatusCode != http.StatusBadGateway || dc.entries(t) != 0 {
		t.Errorf("no contents: %d %s, %d entries; want 502 and none", resp.StatusCode, b, dc.entries(t))
	}
}
