package main

// The gateway's store-touching paths on S3 (a real SeaweedFS node,
// storage/storagetest/s3test), in front of the real upstreams: the stream
// cache (a miss teed into the bucket, a hit served from it, proxied or by
// a presigned redirect, with Range), a large blob of a tools/call result
// offloaded into the bucket and read back, a broken upstream leaving the
// bucket empty, and file inputs. The local-store variants are the other
// gateway tests; these use small sizes and one upstream each.

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpblob/mcpblob/core/mcp/mcptest"
	"github.com/mcpblob/mcpblob/storage"
	"github.com/mcpblob/mcpblob/storage/s3"
	"github.com/mcpblob/mcpblob/storage/storagetest/s3test"
)

// s3BigSize is the size of the blob the S3 tests stream: a few MiB, not a
// multiple of 3.
const s3BigSize = 3<<20 + 1

// gatewayS3 is the test binary's SeaweedFS node, started on first use (or
// early, by startS3Early) and stopped by TestMain (stopGatewayS3).
var gatewayS3 struct {
	mu  sync.Mutex
	srv *s3test.Server
	err error
}

// startS3Early starts the node in the background, and makes its first
// write (about 9 s on a fresh node, 0.3 s for a later bucket), when the
// full leg will run TestGatewayS3: the other tests run meanwhile. TestMain
// calls it with the flags parsed.
func startS3Early() {
	if testing.Short() || !runsTest(flag.Lookup("test.run").Value.String(), "TestGatewayS3") {
		return
	}
	gatewayS3.mu.Lock()
	go func() {
		defer gatewayS3.mu.Unlock()
		if gatewayS3.srv, gatewayS3.err = s3test.Start(); gatewayS3.err != nil {
			return
		}
		srv := gatewayS3.srv
		be, err := s3.Open(context.Background(), s3.Options{Endpoint: "http://" + srv.Endpoint, Bucket: s3test.BucketName("warm"),
			AccessKey: srv.AccessKey, SecretKey: srv.SecretKey, CreateBucket: true})
		if err != nil {
			return // the test meets the node's trouble itself
		}
		defer be.Close()
		if w, err := be.Create(context.Background(), "warm", storage.CreateOptions{}); err == nil {
			io.WriteString(w, "warm")
			w.Commit(context.Background())
		}
	}()
}

// runsTest reports whether a -run pattern may select the top-level test
// name.
func runsTest(pattern, name string) bool {
	top, _, _ := strings.Cut(pattern, "/")
	re, err := regexp.Compile(top)
	return pattern == "" || err != nil || re.MatchString(name)
}

func sharedS3(t *testing.T) *s3test.Server {
	t.Helper()
	gatewayS3.mu.Lock()
	defer gatewayS3.mu.Unlock()
	if gatewayS3.srv == nil && gatewayS3.err == nil {
		gatewayS3.srv, gatewayS3.err = s3test.Start()
	}
	if gatewayS3.err != nil {
		t.Fatal(gatewayS3.err)
	}
	return gatewayS3.srv
}

// stopGatewayS3 stops the node, if one was started.
func stopGatewayS3() error {
	gatewayS3.mu.Lock()
	defer gatewayS3.mu.Unlock()
	if gatewayS3.srv == nil {
		return nil
	}
	return gatewayS3.srv.Stop()
}

// startS3Gateway starts the gateway in front of upstreamURL with its
// store on bucket of the shared node ("": a new one); it returns the
// bucket too, opened here for listing.
func startS3Gateway(t *testing.T, upstreamURL, bucket string, extra ...string) (*gatewayProc, s3Bucket) {
	t.Helper()
	srv := sharedS3(t)
	if bucket == "" {
		bucket = s3test.BucketName("gw")
	}
	t.Setenv("MCPBLOB_S3_ACCESS_KEY", srv.AccessKey)
	t.Setenv("MCPBLOB_S3_SECRET_KEY", srv.SecretKey)
	gw := startGateway(t, upstreamURL, append([]string{"--s3-endpoint", "http://" + srv.Endpoint, "--s3-bucket", bucket}, extra...)...)
	be, err := s3.Open(t.Context(), s3.Options{Endpoint: "http://" + srv.Endpoint, Bucket: bucket,
		AccessKey: srv.AccessKey, SecretKey: srv.SecretKey})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { be.Close() })
	return gw, s3Bucket{be, bucket}
}

// s3Bucket is a gateway's bucket.
type s3Bucket struct {
	storage.Backend
	name string
}

// bucketObjects lists the bucket's objects whose key holds part (but the
// stream cache's ".facts" of an entry), once there are want of them: a
// SeaweedFS listing may miss, for a moment, an object just committed. It
// returns what it last saw after 5 s.
func bucketObjects(t *testing.T, be storage.Backend, part string, want int) []storage.Info {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if out := listObjects(t, be, part); len(out) == want || time.Now().After(deadline) {
			return out
		}
	}
}

// listObjects lists the bucket's objects whose key holds part, but
// ".facts".
func listObjects(t *testing.T, be storage.Backend, part string) []storage.Info {
	t.Helper()
	page, err := be.List(context.Background(), "", "", 1000)
	if err != nil {
		t.Fatal(err)
	}
	var out []storage.Info
	for _, it := range page.Items {
		if strings.Contains(it.Key, part) && !strings.HasSuffix(it.Key, ".facts") {
			out = append(out, it)
		}
	}
	return out
}

// TestGatewayS3 runs the store-touching gateway paths on S3: the stream
// cache and file inputs in front of the Go SDK upstream, offloading in
// front of server-everything, and a broken upstream of its own. The
// gateways share one bucket: SeaweedFS takes seconds to ready a new
// bucket's first write.
func TestGatewayS3(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: runs in the full (non -short) leg of make test")
	}
	u := startUpstream(t, upstreamGoSDK, s3BigSize)
	gw, be := startS3Gateway(t, u.URL, "")
	t.Run("stream cache", func(t *testing.T) { checkS3StreamCache(t, u, gw, be) })
	t.Run("file inputs", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		checkFileOverBodyLimit(t, fileCall(t, ctx, connectUpstream(t, ctx, gw.URL, mcptest.Version20251125), 7<<19))
	})
	t.Run("offload", func(t *testing.T) { checkS3Offload(t, be) })
	t.Run("broken upstream", func(t *testing.T) { checkS3BrokenUpstream(t, be) })
}

// checkS3StreamCache streams the upstream's big blob twice: the first
// download goes upstream and leaves one entry in the bucket, the second is
// a 302 to a /d link streamed from S3 (Range too); a second node on the
// same bucket with --download-redirect serves it by a presigned URL.
func checkS3StreamCache(t *testing.T, u *upstream, gw *gatewayProc, be s3Bucket) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	via := mcptest.New(gw.URL, mcptest.Version20251125)
	via.Capabilities = streamCaps
	if err := via.Connect(ctx); err != nil {
		t.Fatalf("connect through the gateway: %v", err)
	}
	want := patternSum(s3BigSize)
	if got := streamResource(t, ctx, via, u.BigURI, false); got.size != s3BigSize || got.sha256 != want || got.how != "downloadUrl" {
		t.Fatalf("first download (%s): %d bytes, sha256 %s; want the upstream's %d", got.how, got.size, got.sha256, s3BigSize)
	}
	entries := bucketObjects(t, be, "gateway/cache/", 1)
	if len(entries) != 1 || entries[0].Size != s3BigSize {
		t.Fatalf("after the first download the bucket holds %+v; want one %d-byte cache entry", entries, s3BigSize)
	}
	loc := cachedLocation(t, ctx, via, u.BigURI)
	if !strings.Contains(loc, "/d/") {
		t.Fatalf("a cached download redirects to %q; want the blob service's /d link", loc)
	}
	checkRange(t, loc, 1000, 1999)
	if got := fetchStreamed(t, ctx, "cached", loc, false); got.sha256 != want {
		t.Errorf("cached download: %d bytes, sha256 %s: not the upstream's", got.size, got.sha256)
	}

	// Another node on the same bucket serves the entry by presigned URL.
	gw2, _ := startS3Gateway(t, u.URL, be.name, "--download-redirect")
	via2 := mcptest.New(gw2.URL, mcptest.Version20251125)
	via2.Capabilities = streamCaps
	if err := via2.Connect(ctx); err != nil {
		t.Fatalf("connect through the second gateway: %v", err)
	}
	d := cachedLocation(t, ctx, via2, u.BigURI)
	presigned := redirectOf(t, d)
	if !strings.Contains(presigned, sharedS3(t).Endpoint) || !strings.Contains(presigned, "X-Amz-Signature=") {
		t.Fatalf("/d with --download-redirect points at %q; want a presigned URL of the S3 node", presigned)
	}
	checkRange(t, presigned, s3BigSize-100, s3BigSize-1)
}

// cachedLocation asks for a downloadUrl of uri and GETs it without
// following: it must be the stream cache's 302; Location is returned.
func cachedLocation(t *testing.T, ctx context.Context, mc *mcptest.Client, uri string) string {
	t.Helper()
	res := call(t, ctx, mc, "resources/stream", `{"uri":`+strconvQuote(uri)+`}`)
	var st struct{ DownloadURL string }
	if json.Unmarshal(res.Result, &st) != nil || st.DownloadURL == "" {
		t.Fatalf("resources/stream %s: %.300s; want a downloadUrl", uri, res.Result)
	}
	loc := redirectOf(t, st.DownloadURL)
	if !strings.HasPrefix(loc, "http://127.0.0.1:") {
		t.Fatalf("the cached download points off this machine: %q", loc)
	}
	return loc
}

// redirectOf GETs url without following and returns its 302's Location.
func redirectOf(t *testing.T, url string) string {
	t.Helper()
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound || resp.Header.Get("Location") == "" {
		t.Fatalf("GET %s: %d %.300s; want a 302", url, resp.StatusCode, b)
	}
	return resp.Header.Get("Location")
}

// checkRange GETs bytes first-last of the pattern blob at url.
func checkRange(t *testing.T, url string, first, last int64) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set("Range", fmt.Sprintf("bytes=%d-%d", first, last))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	want := make([]byte, 0, last-first+1)
	for i := first; i <= last; i++ {
		want = append(want, blobPattern[i%blobPatternPeriod])
	}
	if resp.StatusCode != http.StatusPartialContent || !bytes.Equal(b, want) {
		t.Errorf("Range %d-%d of %s: %d, %d bytes; want 206 with the pattern's bytes", first, last, url, resp.StatusCode, len(b))
	}
}

// checkS3Offload has server-everything gzip a 1.5 MiB incompressible file
// (served here, fetched by the upstream) into an embedded resource: over
// --offload-over (1 MiB by default) it reaches the client as a
// resource_link into the bucket, whose resources/read and
// resources/stream bytes are identical and gunzip to the file.
func checkS3Offload(t *testing.T, be s3Bucket) {
	file := make([]byte, 3<<19)
	rand.Read(file)
	files := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(file) }))
	t.Cleanup(files.Close)
	u := startUpstream(t, upstreamEverything, 0)
	gw, _ := startS3Gateway(t, u.URL, be.name)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	via := mcptest.New(gw.URL, mcptest.Version20251125)
	via.Capabilities = streamCaps
	if err := via.Connect(ctx); err != nil {
		t.Fatalf("connect through the gateway: %v", err)
	}
	res := call(t, ctx, via, "tools/call", `{"name":"gzip-file-as-resource","arguments":{"name":"f.gz","data":`+
		strconvQuote(files.URL+"/f")+`,"outputType":"resource"}}`)
	var r struct{ Content []struct{ Type, URI string } }
	if json.Unmarshal(res.Result, &r) != nil || len(r.Content) != 1 || r.Content[0].Type != "resource_link" ||
		!strings.HasPrefix(r.Content[0].URI, "mcpblob:///offload/") {
		t.Fatalf("tools/call: %.400s; want the gzip as a resource_link", res.Result)
	}
	read := readContents(t, ctx, via, r.Content[0].URI)
	streamed := streamResource(t, ctx, via, r.Content[0].URI, true)
	if !bytes.Equal(read.bytes, streamed.body) || read.MimeType != "application/gzip" {
		t.Fatalf("resources/read (%d bytes of %q) and resources/stream (%d bytes) differ", len(read.bytes), read.MimeType, len(streamed.body))
	}
	zr, err := gzip.NewReader(bytes.NewReader(read.bytes))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := io.ReadAll(zr); err != nil || !bytes.Equal(got, file) {
		t.Errorf("the offloaded gzip holds %d bytes (%v), not the file", len(got), err)
	}
	if objs := bucketObjects(t, be, "gateway/offload/", 1); len(objs) != 1 || objs[0].Size != int64(len(read.bytes)) {
		t.Errorf("the bucket holds %+v; want the one offloaded blob", objs)
	}
}

// checkS3BrokenUpstream puts the gateway in front of an upstream whose
// blobs break: a resources/read answer cut halfway (the downloadUrl, with
// the stream cache) and a tools/call image whose base64 turns bad halfway
// (offloaded): the client gets errors and nothing reaches the bucket. A
// good image stored after them (tool "good") is the listing's control:
// once it shows, it is the only object.
func checkS3BrokenUpstream(t *testing.T, be s3Bucket) {
	half := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{0x89, 'P', 'N', 'G', 1, 2}, 1<<19))
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		switch {
		case bytes.Contains(b, []byte(`"resources/read"`)):
			io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{"contents":[{"uri":"x:cut","blob":"`+half)
			w.(http.Flusher).Flush()
			panic(http.ErrAbortHandler) // the body ends early
		case bytes.Contains(b, []byte(`"good"`)):
			io.WriteString(w, `{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"image","mimeType":"image/png","data":"`+half+half+`"}]}}`)
		default:
			io.WriteString(w, `{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"image","mimeType":"image/png","data":"`+half+half+`!!"}]}}`)
		}
	}))
	t.Cleanup(up.Close)
	gw, _ := startS3Gateway(t, up.URL, be.name)
	prior := listObjects(t, be, "gateway/")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	mc := mcptest.New(gw.URL, mcptest.Version20251125) // no initialize: the upstream keeps no session
	if res, err := mc.Send(mc.NewRequestID(ctx, "2", "tools/call", `{"name":"shot"}`)); err != nil || res.Error == nil {
		t.Errorf("tools/call with a broken image: %v; want a JSON-RPC error", err)
	}
	stream, err := mc.Send(mc.NewRequest(ctx, "resources/stream", `{"uri":"x:cut"}`))
	var st struct{ DownloadURL string }
	if err != nil || json.Unmarshal(stream.Result, &st) != nil || st.DownloadURL == "" {
		t.Fatalf("resources/stream: %v %.300s", err, stream.Body)
	}
	if resp, err := http.Get(st.DownloadURL); err == nil {
		n, rerr := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if rerr == nil && resp.StatusCode == http.StatusOK {
			t.Errorf("a cut resources/read: 200 with %d bytes, ended cleanly", n)
		}
	}
	good, err := mc.Send(mc.NewRequestID(ctx, "3", "tools/call", `{"name":"good"}`))
	if err != nil || !bytes.Contains(good.Result, []byte(`"resource_link"`)) {
		t.Fatalf("tools/call of the good image: %v; want a resource_link", err)
	}
	bucketObjects(t, be, "gateway/", len(prior)+1)
	time.Sleep(200 * time.Millisecond)
	var added []storage.Info
	for _, it := range listObjects(t, be, "gateway/") {
		if !slices.ContainsFunc(prior, func(p storage.Info) bool { return p.Key == it.Key }) {
			added = append(added, it)
		}
	}
	if len(added) != 1 || !strings.Contains(added[0].Key, "gateway/offload/") {
		t.Errorf("the broken answers and the good image added %+v to the bucket; want only the good image", added)
	}
}
