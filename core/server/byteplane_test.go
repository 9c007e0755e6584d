package server

import (
	"bytes"
	"crypto/md5"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/mcpblob/mcpblob/core/blobs"
	"github.com/mcpblob/mcpblob/core/server/blobsvc"
	"github.com/mcpblob/mcpblob/core/token"
	"github.com/mcpblob/mcpblob/storage"
	"github.com/mcpblob/mcpblob/storage/localfs"
	"github.com/mcpblob/mcpblob/storage/s3"
	"github.com/mcpblob/mcpblob/storage/storagetest/s3test"
)

// The byte plane against started servers, for each real backend: the
// embedded local store and S3 (a real SeaweedFS node, storage/storagetest/s3test).

type testBackend struct {
	name string
	new  func(t *testing.T) storage.Backend
}

func byteplaneBackends() []testBackend {
	return []testBackend{
		{"localfs", func(t *testing.T) storage.Backend {
			b, err := localfs.Open(t.TempDir(), localfs.Options{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { b.Close() })
			return b
		}},
		{"s3", func(t *testing.T) storage.Backend {
			srv := s3test.Shared(t)
			b, err := s3.Open(t.Context(), s3.Options{Endpoint: "http://" + srv.Endpoint,
				AccessKey: srv.AccessKey, SecretKey: srv.SecretKey,
				Bucket: "bp" + strings.ToLower(rand.Text()[:12]), CreateBucket: true})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { b.Close() })
			return b
		}},
	}
}

// bpClient talks to one started server.
type bpClient struct {
	t    *testing.T
	base string
	srv  *Server
	hc   *http.Client // does not follow redirects
}

func newBPClient(t *testing.T, opts Options) *bpClient {
	base, srv := startTestServer(t, opts)
	return &bpClient{t: t, base: base, srv: srv, hc: &http.Client{
		Timeout:       60 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

func (c *bpClient) do(method, u string, body io.Reader, hdr map[string]string) httpResp {
	c.t.Helper()
	if strings.HasPrefix(u, "/") {
		u = c.base + u
	}
	req, err := http.NewRequest(method, u, body)
	if err != nil {
		c.t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, u, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		c.t.Fatalf("%s %s: reading body: %v", method, u, err)
	}
	return httpResp{resp.StatusCode, resp.Header, b}
}

func (c *bpClient) put(key string, data []byte, hdr map[string]string) httpResp {
	c.t.Helper()
	return c.do("PUT", "/v1/blobs/"+escapeKey(key), bytes.NewReader(data), hdr)
}

func escapeKey(key string) string {
	segs := strings.Split(key, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return strings.Join(segs, "/")
}

func (c *bpClient) link(key string, extra string) string {
	c.t.Helper()
	r := c.do("POST", "/v1/links", strings.NewReader(`{"key":`+jsonString(key)+extra+`}`), nil)
	if r.status != 201 {
		c.t.Fatalf("POST /v1/links: %d %s", r.status, r.body)
	}
	var out struct{ URL, ExpiresAt string }
	if err := json.Unmarshal(r.body, &out); err != nil || out.URL == "" {
		c.t.Fatalf("POST /v1/links: %s", r.body)
	}
	return out.URL
}

func errCode(t *testing.T, r httpResp) string {
	t.Helper()
	var e struct {
		Error struct{ Code, Message string }
	}
	if err := json.Unmarshal(r.body, &e); err != nil {
		t.Fatalf("error body %q: %v", r.body, err)
	}
	return e.Error.Code
}

// client connects an MCP client of version declaring caps to c's server.
// A 2025-11-25 initialize must offer resources.stream exactly when caps
// declare resourceStreaming.
func (c *bpClient) client(version, caps string) *mcpClient {
	c.t.Helper()
	mc := newMCPClient(c.t, c.base, version, caps)
	if version == legacyVersion {
		var res struct {
			Capabilities struct {
				Resources map[string]any
			}
		}
		json.Unmarshal(mc.init.Result, &res)
		_, has := res.Capabilities.Resources["stream"]
		if want := strings.Contains(caps, "resourceStreaming"); has != want {
			c.t.Fatalf("initialize with %s: resources.stream offered = %v", caps, has)
		}
	}
	return mc
}

func randomBytes(n int) []byte {
	b := make([]byte, n)
	rand.Read(b)
	return b
}

func TestResourcesStream(t *testing.T) {
	parallel(t)
	data := randomBytes(3<<20 + 17)
	sum := sha256.Sum256(data)
	want := hex.EncodeToString(sum[:])
	const key = "dir/résumé ü.bin"
	uri := blobs.URI(key)
	for _, be := range byteplaneBackends() {
		for _, mode := range []string{blobs.StreamDirect, blobs.StreamRedirect, blobs.StreamURL} {
			t.Run(be.name+"/"+mode, func(t *testing.T) {
				t.Parallel()
				backend := be.new(t)
				c := newBPClient(t, Options{Backend: backend, Blobs: blobs.Options{StreamMode: mode}})
				if r := c.put(key, data, map[string]string{"Content-Type": "application/x-test",
					"Content-Disposition": `attachment; filename*=UTF-8''r%C3%A9sum%C3%A9%20%C3%BC.bin`}); r.status != 201 {
					t.Fatalf("PUT: %d %s", r.status, r.body)
				}
				_, presigns := backend.(storage.Presigner)
				for _, era := range []string{legacyVersion, modernVersion} {
					r := c.client(era, streamCaps).streamResource(uri)
					effective := mode
					if mode == blobs.StreamRedirect && !presigns {
						effective = blobs.StreamDirect
					}
					switch effective {
					case blobs.StreamDirect:
						checkDirect(t, era, r.httpResp, uri, data, want)
					case blobs.StreamRedirect:
						if r.status != http.StatusFound || r.header.Get("MCP-Resource-Uri") != uri || r.header.Get("Location") == "" {
							t.Fatalf("%s redirect: %d %v %s", era, r.status, r.header, r.body)
						}
						got := c.do("GET", r.header.Get("Location"), nil, nil)
						if got.status != 200 || got.sum() != want {
							t.Fatalf("%s presigned GET: %d, %d bytes", era, got.status, len(got.body))
						}
						if ct, cd := got.header.Get("Content-Type"), got.header.Get("Content-Disposition"); ct != "application/x-test" || !strings.Contains(cd, "filename*=UTF-8''r%C3%A9sum%C3%A9%20%C3%BC.bin") {
							t.Errorf("%s presigned GET headers: %q %q", era, ct, cd)
						}
					case blobs.StreamURL:
						var res struct {
							Result struct {
								URI, MimeType, DownloadURL string
								Size                       int64
							}
						}
						if r.status != 200 || json.Unmarshal(r.body, &res) != nil || res.Result.DownloadURL == "" {
							t.Fatalf("%s url mode: %d %s", era, r.status, r.body)
						}
						if res.Result.URI != uri || res.Result.MimeType != "application/x-test" || res.Result.Size != int64(len(data)) ||
							!strings.HasPrefix(res.Result.DownloadURL, c.base+"/d/") {
							t.Fatalf("%s url mode result: %+v", era, res.Result)
						}
						got := c.do("GET", res.Result.DownloadURL, nil, nil)
						checkDirect(t, era+" downloadUrl", got, uri, data, want)
						if again := c.do("GET", res.Result.DownloadURL, nil, nil); again.status != 404 {
							t.Errorf("%s: second GET of a single-use downloadUrl: %d", era, again.status)
						}
					}
					checkStreamErrors(t, c, era, uri, len(data))
				}
			})
		}
	}
}

func checkDirect(t *testing.T, what string, r httpResp, uri string, data []byte, want string) {
	t.Helper()
	if r.status != 200 {
		t.Fatalf("%s: status %d %s", what, r.status, r.body[:min(len(r.body), 300)])
	}
	h := r.header
	if h.Get("Content-Type") != "application/x-test" || h.Get("Content-Length") != fmt.Sprint(len(data)) ||
		h.Get("Content-Disposition") != `attachment; filename="r_sum_ _.bin"; filename*=UTF-8''r%C3%A9sum%C3%A9%20%C3%BC.bin` ||
		h.Get("Cache-Control") != "no-store" {
		t.Errorf("%s: headers %v", what, h)
	}
	if uri != "" && h.Get("MCP-Resource-Uri") != uri {
		t.Errorf("%s: MCP-Resource-Uri %q", what, h.Get("MCP-Resource-Uri"))
	}
	if r.sum() != want {
		t.Fatalf("%s: %d bytes, sha256 mismatch", what, len(r.body))
	}
}

func checkStreamErrors(t *testing.T, c *bpClient, era string, uri string, size int) {
	t.Helper()
	modern := era == modernVersion
	s := c.client(era, streamCaps)
	// Unknown resource.
	r := s.streamResource("blob:///no/such")
	e := r.rpcError()
	if want := map[bool]int{false: -32002, true: -32602}[modern]; e.Code != want || e.Data["uri"] != "blob:///no/such" {
		t.Errorf("%s unknown resource: %d %v", era, e.Code, e.Data)
	}
	// Over maxStreamSize: refused before any byte.
	small := c.client(era, fmt.Sprintf(`{"resourceStreaming":{"maxStreamSize":%d}}`, size-1))
	r = small.streamResource(uri)
	if e := r.rpcError(); e.Code != -32004 || e.Data["maxStreamSize"] != float64(size-1) {
		t.Errorf("%s over maxStreamSize: %d %v", era, e.Code, e.Data)
	}
	// A client that did not declare resourceStreaming.
	none := c.client(era, `{}`)
	r = none.streamResource(uri)
	e = r.rpcError()
	switch {
	case modern && (e.Code != -32021 || r.status != 400):
		t.Errorf("%s without capability: %d (HTTP %d) %v", era, e.Code, r.status, e.Data)
	case !modern && e.Code != -32003:
		t.Errorf("%s without capability: %d %v", era, e.Code, e.Data)
	}
	// streamable on resources and the template.
	r = s.call("resources/templates/list", "{}")
	if !strings.Contains(string(r.body), `"streamable":true`) {
		t.Errorf("%s: template without streamable: %s", era, r.body)
	}
	r = s.call("resources/list", "{}")
	if !strings.Contains(string(r.body), `"streamable":true`) {
		t.Errorf("%s: resources without streamable: %s", era, r.body)
	}
	if modern {
		// Mcp-Name, when sent, must match params.uri (-32020, HTTP 400).
		r = s.with(map[string]string{"Accept": "application/json", "Mcp-Name": "blob:///other"}).streamResource(uri)
		if e := r.rpcError(); e.Code != -32020 || r.status != 400 {
			t.Errorf("resources/stream with a mismatched Mcp-Name: %d (HTTP %d)", e.Code, r.status)
		}
		r = s.call("server/discover", "{}")
		if !strings.Contains(string(r.body), `"stream":true`) {
			t.Errorf("discover with resourceStreaming: %s", r.body)
		}
		r = none.call("server/discover", "{}")
		if strings.Contains(string(r.body), `"stream":true`) {
			t.Errorf("discover without resourceStreaming offers stream: %s", r.body)
		}
	}
}

func TestDownloadLinks(t *testing.T) {
	parallel(t)
	data := randomBytes(1<<20 + 3)
	sum := sha256.Sum256(data)
	want := hex.EncodeToString(sum[:])
	for _, be := range byteplaneBackends() {
		t.Run(be.name, func(t *testing.T) {
			t.Parallel()
			kr, _ := token.NewKeyring(token.Key{ID: "k1", Secret: bytes.Repeat([]byte{9}, 32)})
			c := newBPClient(t, Options{Backend: be.new(t), Keyring: kr})
			if r := c.put("a/b.bin", data, nil); r.status != 201 {
				t.Fatalf("PUT: %d %s", r.status, r.body)
			}
			link := c.link("a/b.bin", `,"filename":"named.dat"`)
			full := c.do("GET", link, nil, nil)
			if full.status != 200 || full.sum() != want || full.header.Get("Accept-Ranges") != "bytes" ||
				full.header.Get("Cache-Control") != "no-store" || full.header.Get("ETag") == "" ||
				!strings.Contains(full.header.Get("Content-Disposition"), `filename="named.dat"`) {
				t.Fatalf("GET link: %d %v", full.status, full.header)
			}
			etag := full.header.Get("ETag")
			n := len(data)
			cases := []struct {
				name   string
				hdr    map[string]string
				status int
				body   []byte
				cr     string
			}{
				{"range", map[string]string{"Range": "bytes=10-19"}, 206, data[10:20], fmt.Sprintf("bytes 10-19/%d", n)},
				{"open range", map[string]string{"Range": fmt.Sprintf("bytes=%d-", n-5)}, 206, data[n-5:], fmt.Sprintf("bytes %d-%d/%d", n-5, n-1, n)},
				{"suffix", map[string]string{"Range": "bytes=-7"}, 206, data[n-7:], fmt.Sprintf("bytes %d-%d/%d", n-7, n-1, n)},
				{"clipped", map[string]string{"Range": fmt.Sprintf("bytes=%d-%d", n-2, n+100)}, 206, data[n-2:], fmt.Sprintf("bytes %d-%d/%d", n-2, n-1, n)},
				{"if-range match", map[string]string{"Range": "bytes=0-0", "If-Range": etag}, 206, data[:1], fmt.Sprintf("bytes 0-0/%d", n)},
				{"if-range mismatch", map[string]string{"Range": "bytes=0-0", "If-Range": `"other"`}, 200, data, ""},
				{"multi-range ignored", map[string]string{"Range": "bytes=0-0,5-6"}, 200, data, ""},
				{"416", map[string]string{"Range": fmt.Sprintf("bytes=%d-", n)}, 416, nil, fmt.Sprintf("bytes */%d", n)},
				{"304", map[string]string{"If-None-Match": etag}, 304, []byte{}, ""},
				{"304 list", map[string]string{"If-None-Match": `"x", ` + etag}, 304, []byte{}, ""},
			}
			for _, tc := range cases {
				r := c.do("GET", link, nil, tc.hdr)
				if r.status != tc.status || r.header.Get("Content-Range") != tc.cr {
					t.Errorf("%s: %d %q, want %d %q (%s)", tc.name, r.status, r.header.Get("Content-Range"), tc.status, tc.cr, r.body[:min(len(r.body), 200)])
					continue
				}
				if tc.body != nil && !bytes.Equal(r.body, tc.body) {
					t.Errorf("%s: body of %d bytes differs", tc.name, len(r.body))
				}
			}
			if r := c.do("HEAD", link, nil, map[string]string{"Range": "bytes=5-"}); r.status != 206 || r.header.Get("Content-Length") != fmt.Sprint(n-5) {
				t.Errorf("HEAD range: %d %v", r.status, r.header)
			}

			tok := strings.TrimPrefix(link, c.base+"/d/")
			// Tampered: flip one payload character.
			tampered := []byte(tok)
			tampered[len(tampered)/2] ^= 1
			expRing := kr.WithClock(func() time.Time { return time.Now().Add(-time.Hour) })
			expired, _ := expRing.MintDownload(c.base, token.DownloadGrant{Key: "a/b.bin", TTL: time.Minute})
			upload, _ := kr.MintUpload(c.base, token.Upload{Key: "a/b.bin", MaxSize: 10})
			otherRing := token.NewRandomKeyring()
			foreign, _ := otherRing.MintDownload(c.base, token.DownloadGrant{Key: "a/b.bin"})
			for _, tc := range []struct {
				name, url string
				status    int
			}{
				{"tampered", c.base + "/d/" + string(tampered), 401},
				{"garbage", c.base + "/d/garbage", 401},
				{"empty", c.base + "/d/", 401},
				{"foreign key", foreign.URL, 401},
				{"wrong purpose", c.base + "/d/" + upload.Token, 401},
				{"expired", expired.URL, 410},
			} {
				for _, m := range []string{"GET", "HEAD"} {
					r := c.do(m, tc.url, nil, map[string]string{"Range": "bytes=0-"})
					if r.status != tc.status || bytes.Contains(r.body, data[:16]) || r.header.Get("ETag") != "" {
						t.Errorf("%s %s: %d (%d bytes)", m, tc.name, r.status, len(r.body))
					}
				}
			}

			// Single use: HEAD does not consume, the first GET does; a replay
			// (full or ranged) never serves bytes.
			once := c.link("a/b.bin", `,"singleUse":true`)
			if r := c.do("HEAD", once, nil, nil); r.status != 200 {
				t.Fatalf("HEAD single-use: %d", r.status)
			}
			if r := c.do("GET", once, nil, map[string]string{"Range": "bytes=0-9"}); r.status != 206 || !bytes.Equal(r.body, data[:10]) {
				t.Fatalf("first GET single-use: %d", r.status)
			}
			for _, h := range []map[string]string{nil, {"Range": "bytes=10-"}} {
				if r := c.do("GET", once, nil, h); r.status != 404 || len(r.body) > 200 {
					t.Errorf("replayed single-use link: %d (%d bytes)", r.status, len(r.body))
				}
			}

			// Unknown object: the link outlives the blob.
			gone := c.link("a/b.bin", "")
			if r := c.do("DELETE", "/v1/blobs/a/b.bin", nil, nil); r.status != 204 {
				t.Fatalf("DELETE: %d %s", r.status, r.body)
			}
			if r := c.do("GET", gone, nil, nil); r.status != 404 || errCode(t, r) != "not_found" {
				t.Errorf("link to a deleted blob: %d %s", r.status, r.body)
			}
		})
	}
}

func TestDownloadRedirect(t *testing.T) {
	parallel(t)
	be := byteplaneBackends()[1]
	data := randomBytes(100_000)
	c := newBPClient(t, Options{Backend: be.new(t), Service: blobsvc.Options{DownloadRedirect: true}})
	c.put("r.bin", data, map[string]string{"Content-Type": "image/png"})
	link := c.link("r.bin", `,"singleUse":true`)
	if r := c.do("HEAD", link, nil, nil); r.status != 200 || r.header.Get("Content-Length") != "100000" || r.header.Get("Content-Type") != "image/png" {
		t.Fatalf("HEAD with DownloadRedirect: %d %v", r.status, r.header)
	}
	r := c.do("GET", link, nil, nil)
	loc := r.header.Get("Location")
	if r.status != 302 || loc == "" || r.header.Get("Cache-Control") != "no-store" {
		t.Fatalf("GET with DownloadRedirect: %d %v", r.status, r.header)
	}
	got := c.do("GET", loc, nil, map[string]string{"Range": "bytes=1-2"})
	if got.status != 206 || !bytes.Equal(got.body, data[1:3]) || got.header.Get("Content-Type") != "image/png" {
		t.Fatalf("presigned GET: %d %v", got.status, got.header)
	}
	if r := c.do("GET", link, nil, nil); r.status != 404 {
		t.Errorf("replayed single-use redirect: %d", r.status)
	}
}

func TestControlAPI(t *testing.T) {
	parallel(t)
	for _, be := range byteplaneBackends() {
		t.Run(be.name, func(t *testing.T) {
			t.Parallel()
			c := newBPClient(t, Options{Backend: be.new(t)})
			events, unsub := c.srv.MCP().Hub().Subscribe("")
			defer unsub()
			data := randomBytes(300_000)
			sum := sha256.Sum256(data)
			hexSum := hex.EncodeToString(sum[:])
			m := md5.Sum(data)

			// Checksums: a mismatch stores nothing.
			r := c.put("k/v.bin", data, map[string]string{"x-mcp-sha256": strings.Repeat("0", 64)})
			if r.status != 400 || errCode(t, r) != "checksum_mismatch" {
				t.Fatalf("PUT with a wrong sha256: %d %s", r.status, r.body)
			}
			r = c.put("k/v.bin", data, map[string]string{"Content-MD5": base64.StdEncoding.EncodeToString(make([]byte, 16))})
			if r.status != 400 || errCode(t, r) != "checksum_mismatch" {
				t.Fatalf("PUT with a wrong MD5: %d %s", r.status, r.body)
			}
			if r := c.do("GET", "/v1/blobs/k/v.bin", nil, nil); r.status != 404 || errCode(t, r) != "not_found" {
				t.Fatalf("GET after failed PUTs: %d %s", r.status, r.body)
			}
			r = c.put("k/v.bin", data, map[string]string{"x-mcp-sha256": hexSum, "Content-MD5": base64.StdEncoding.EncodeToString(m[:]),
				"Content-Type": "text/x-thing", "Content-Disposition": `attachment; filename="v 1.bin"`})
			var obj blobsvc.Blob
			if r.status != 201 || json.Unmarshal(r.body, &obj) != nil {
				t.Fatalf("PUT: %d %s", r.status, r.body)
			}
			if obj.Key != "k/v.bin" || obj.URI != "blob:///k/v.bin" || obj.Size != int64(len(data)) || obj.SHA256 != hexSum ||
				obj.MimeType != "text/x-thing" || obj.Filename != "v 1.bin" || obj.ETag == "" || obj.Modified == "" {
				t.Fatalf("PUT result: %+v", obj)
			}
			select {
			case ev := <-events:
				if ev.URI != "blob:///k/v.bin" {
					t.Errorf("hub event %+v", ev)
				}
			case <-time.After(5 * time.Second):
				t.Error("PUT published no hub event")
			}
			if r := c.put("k/v.bin", []byte("x"), map[string]string{"If-None-Match": "*"}); r.status != 412 || errCode(t, r) != "exists" {
				t.Fatalf("PUT If-None-Match * on an existing key: %d %s", r.status, r.body)
			}
			g := c.do("GET", "/v1/blobs/k/v.bin", nil, nil)
			if g.status != 200 || g.sum() != hexSum || g.header.Get("x-mcp-sha256") != hexSum || g.header.Get("Last-Modified") == "" ||
				g.header.Get("ETag") != obj.ETag || !strings.Contains(g.header.Get("Content-Disposition"), `filename="v 1.bin"`) ||
				g.header.Get("Content-Type") != "text/x-thing" {
				t.Fatalf("GET: %d %v", g.status, g.header)
			}
			if h := c.do("HEAD", "/v1/blobs/k/v.bin", nil, nil); h.status != 200 || h.header.Get("Content-Length") != fmt.Sprint(len(data)) || len(h.body) != 0 {
				t.Fatalf("HEAD: %d %v", h.status, h.header)
			}
			if r := c.do("GET", "/v1/blobs/k/v.bin", nil, map[string]string{"Range": "bytes=299990-"}); r.status != 206 || !bytes.Equal(r.body, data[299990:]) {
				t.Fatalf("ranged GET: %d", r.status)
			}

			// Chunked upload of unknown length.
			r = c.put("k/chunked", nil, nil)
			req, _ := http.NewRequest("PUT", c.base+"/v1/blobs/k/chunked", io.MultiReader(bytes.NewReader(data[:1000]), bytes.NewReader(data[1000:])))
			req.ContentLength = -1
			resp, err := c.hc.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != 201 {
				t.Fatalf("chunked PUT: %d", resp.StatusCode)
			}
			if r := c.do("GET", "/v1/blobs/k/chunked", nil, nil); r.sum() != hexSum {
				t.Fatal("chunked PUT stored other bytes")
			}

			// List with a cursor.
			var keys []string
			cursor := ""
			for range 5 {
				r := c.do("GET", "/v1/blobs?prefix=k/&limit=1&cursor="+url.QueryEscape(cursor), nil, nil)
				var page struct {
					Items      []blobsvc.Blob
					NextCursor string
				}
				if r.status != 200 || json.Unmarshal(r.body, &page) != nil {
					t.Fatalf("list: %d %s", r.status, r.body)
				}
				for _, it := range page.Items {
					keys = append(keys, it.Key)
				}
				if cursor = page.NextCursor; cursor == "" {
					break
				}
			}
			if strings.Join(keys, ",") != "k/chunked,k/v.bin" {
				t.Errorf("listed %v", keys)
			}
			if r := c.do("GET", "/v1/blobs?cursor=bogus", nil, nil); r.status != 400 {
				t.Errorf("bad cursor: %d %s", r.status, r.body)
			}

			// Errors.
			for _, tc := range []struct {
				method, path, body string
				status             int
				code               string
			}{
				{"GET", "/v1/blobs/a/../b", "", 400, "invalid_key"},
				{"GET", "/v1/blobs/a//b", "", 400, "invalid_key"},
				{"PUT", "/v1/blobs/.mcpblob/x", "x", 400, "invalid_key"},
				{"GET", "/v1/blobs/none", "", 404, "not_found"},
				{"DELETE", "/v1/blobs/none", "", 404, "not_found"},
				{"POST", "/v1/links", `{"key":"none"}`, 404, "not_found"},
				{"POST", "/v1/links", `{"key":`, 400, "bad_request"},
				{"POST", "/v1/links", `{"key":"k/v.bin","ttlSeconds":-1}`, 400, "bad_request"},
				{"POST", "/v1/uploads", `{"maxSize":-5}`, 400, "bad_request"},
				{"POST", "/v1/uploads", `{"accept":["nonsense"]}`, 400, "bad_request"},
				{"POST", "/v1/nothing", ``, 404, "not_found"},
				{"PATCH", "/v1/blobs/k/v.bin", ``, 405, "method_not_allowed"},
			} {
				r := c.do(tc.method, tc.path, strings.NewReader(tc.body), nil)
				if r.status != tc.status || errCode(t, r) != tc.code {
					t.Errorf("%s %s: %d %s, want %d %s", tc.method, tc.path, r.status, r.body, tc.status, tc.code)
				}
			}

			// Upload endpoints: the token the upload side verifies.
			r = c.do("POST", "/v1/uploads", strings.NewReader(`{"maxSize":1000,"accept":["image/*"],"ttlSeconds":60}`), nil)
			var up struct{ URL, Method, UploadID string }
			if r.status != 201 || json.Unmarshal(r.body, &up) != nil || up.Method != "POST" || up.UploadID == "" ||
				!strings.HasPrefix(up.URL, c.base+"/u/") {
				t.Fatalf("POST /v1/uploads: %d %s", r.status, r.body)
			}
			claims, err := c.srv.opts.Keyring.Verify(strings.TrimPrefix(up.URL, c.base+"/u/"), token.PurposeUpload)
			if err != nil || claims.Nonce != up.UploadID || claims.MaxSize != 1000 || claims.Accept[0] != "image/*" || claims.Object != "" {
				t.Fatalf("upload claims %+v, %v", claims, err)
			}

			if r := c.do("DELETE", "/v1/blobs/k/v.bin", nil, nil); r.status != 204 {
				t.Fatalf("DELETE: %d", r.status)
			}
		})
	}
}

func TestControlAuth(t *testing.T) {
	parallel(t)
	c := newBPClient(t, Options{Backend: byteplaneBackends()[0].new(t), Auth: Auth{Keys: []string{HashKey("sekret") + " alice"}}})
	if r := c.do("GET", "/v1/blobs", nil, nil); r.status != 401 || errCode(t, r) != "unauthorized" {
		t.Fatalf("no key: %d %s", r.status, r.body)
	}
	if r := c.do("GET", "/v1/blobs", nil, map[string]string{"Authorization": "Bearer wrong"}); r.status != 401 {
		t.Fatalf("wrong key: %d", r.status)
	}
	auth := map[string]string{"Authorization": "Bearer sekret"}
	if r := c.do("PUT", "/v1/blobs/x", strings.NewReader("hello"), auth); r.status != 201 {
		t.Fatalf("PUT with key: %d %s", r.status, r.body)
	}
	r := c.do("POST", "/v1/links", strings.NewReader(`{"key":"x"}`), auth)
	var l struct{ URL string }
	json.Unmarshal(r.body, &l)
	// The link is the credential: no API key needed.
	if r := c.do("GET", l.URL, nil, nil); r.status != 200 || string(r.body) != "hello" {
		t.Fatalf("link without key: %d %s", r.status, r.body)
	}
	if r := c.do("GET", "/v1/blobs", nil, map[string]string{"Authorization": "Bearer sekret", "Origin": "http://evil.example"}); r.status != 403 {
		t.Fatalf("foreign Origin: %d", r.status)
	}
}

func TestPutLimit(t *testing.T) {
	parallel(t)
	c := newBPClient(t, Options{Backend: byteplaneBackends()[0].new(t), Service: blobsvc.Options{MaxUploadBytes: 1000}})
	if r := c.put("big", make([]byte, 1001), nil); r.status != 413 || errCode(t, r) != "too_large" {
		t.Fatalf("over the limit: %d %s", r.status, r.body)
	}
	req, _ := http.NewRequest("PUT", c.base+"/v1/blobs/big", io.MultiReader(bytes.NewReader(make([]byte, 600)), bytes.NewReader(make([]byte, 600))))
	req.ContentLength = -1
	resp, err := c.hc.Do(req)
	if err == nil {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 413 {
			t.Fatalf("chunked over the limit: %d %s", resp.StatusCode, b)
		}
	}
	if r := c.do("GET", "/v1/blobs/big", nil, nil); r.status != 404 {
		t.Fatalf("oversized PUT left a blob: %d", r.status)
	}
	if r := c.put("ok", make([]byte, 1000), nil); r.status != 201 {
		t.Fatalf("at the limit: %d %s", r.status, r.body)
	}
}

func TestGetDownloadLinkTool(t *testing.T) {
	parallel(t)
	c := newBPClient(t, Options{Backend: byteplaneBackends()[0].new(t)})
	c.put("t/x.txt", []byte("tool bytes"), map[string]string{"Content-Type": "text/plain"})
	s := c.client(legacyVersion, `{}`)
	r := s.callTool("get_download_link", `{"key":"t/x.txt","ttlSeconds":60}`)
	var res struct {
		Result struct {
			StructuredContent struct {
				URL, ExpiresAt, URI, Key, SHA256, MimeType string
				Size                                       int64
			}
			Content []map[string]any
			IsError bool
		}
	}
	if err := json.Unmarshal(r.body, &res); err != nil || res.Result.IsError {
		t.Fatalf("get_download_link: %s", r.body)
	}
	sc := res.Result.StructuredContent
	if sc.Key != "t/x.txt" || sc.URI != "blob:///t/x.txt" || sc.Size != 10 || sc.SHA256 == "" || sc.MimeType != "text/plain" || sc.ExpiresAt == "" {
		t.Fatalf("structuredContent %+v", sc)
	}
	if len(res.Result.Content) != 2 || res.Result.Content[1]["type"] != "resource_link" {
		t.Fatalf("content %v", res.Result.Content)
	}
	if g := c.do("GET", sc.URL, nil, nil); g.status != 200 || string(g.body) != "tool bytes" {
		t.Fatalf("GET tool link: %d %s", g.status, g.body)
	}
	r = s.callTool("get_download_link", `{"key":"t/x.txt","filename":"é.txt","singleUse":true}`)
	if err := json.Unmarshal(r.body, &res); err != nil || res.Result.IsError {
		t.Fatalf("get_download_link singleUse: %s", r.body)
	}
	once := res.Result.StructuredContent.URL
	if g := c.do("GET", once, nil, nil); g.status != 200 || !strings.Contains(g.header.Get("Content-Disposition"), "filename*=UTF-8''%C3%A9.txt") {
		t.Fatalf("GET single-use tool link: %d %v", g.status, g.header)
	}
	if g := c.do("GET", once, nil, nil); g.status != 404 {
		t.Fatalf("second GET of a single-use tool link: %d", g.status)
	}
	r = s.callTool("get_download_link", `{"key":"t/none"}`)
	if !strings.Contains(string(r.body), `"isError":true`) {
		t.Fatalf("link to a missing blob: %s", r.body)
	}
}

func TestEmptyBlob(t *testing.T) {
	parallel(t)
	for _, be := range byteplaneBackends() {
		t.Run(be.name, func(t *testing.T) {
			t.Parallel()
			c := newBPClient(t, Options{Backend: be.new(t), Blobs: blobs.Options{StreamMode: blobs.StreamDirect}})
			if r := c.put("empty", nil, nil); r.status != 201 {
				t.Fatalf("PUT empty: %d %s", r.status, r.body)
			}
			link := c.link("empty", "")
			for _, u := range []string{link, "/v1/blobs/empty"} {
				if r := c.do("GET", u, nil, nil); r.status != 200 || len(r.body) != 0 || r.header.Get("Content-Length") != "0" {
					t.Errorf("GET %s: %d %v", u, r.status, r.header)
				}
				if r := c.do("GET", u, nil, map[string]string{"Range": "bytes=0-"}); r.status != 416 || r.header.Get("Content-Range") != "bytes */0" {
					t.Errorf("ranged GET %s: %d %v", u, r.status, r.header)
				}
			}
			r := c.client(legacyVersion, streamCaps).streamResource("blob:///empty")
			if r.status != 200 || len(r.body) != 0 || r.header.Get("Content-Length") != "0" {
				t.Errorf("resources/stream of an empty blob: %d %v", r.status, r.header)
			}
		})
	}
}
