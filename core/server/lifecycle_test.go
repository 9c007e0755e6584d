package server

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpblob/mcpblob/core/blobs"
	"github.com/mcpblob/mcpblob/storage"
	"github.com/mcpblob/mcpblob/storage/localfs"
)

// lcClock is the lifecycle's clock in these tests: it stands still where
// the test set it (at first the time it was made), so that a slow store
// expires nothing early, and it passes an expiry without sleeping (the
// surfaces stamp expiries from time.Now).
type lcClock struct{ at atomic.Int64 }

func newLCClock() *lcClock {
	c := &lcClock{}
	c.set(time.Now())
	return c
}

func (c *lcClock) now() time.Time  { return time.Unix(0, c.at.Load()) }
func (c *lcClock) set(t time.Time) { c.at.Store(t.UnixNano()) }

// ttlServer starts a server on be whose lifecycle runs on clk, with no
// sweep rounds of its own (the test sweeps).
func ttlServer(t *testing.T, be storage.Backend, clk *lcClock) *bpClient {
	return newBPClient(t, Options{Backend: be, Lifecycle: Lifecycle{Now: clk.now, SweepEvery: -1}})
}

// TestLifecycleTTL: blobs stored with ttlSeconds 2 on each upload surface
// (PUT with the query parameter and with the header, upload_file with key
// before and after the file, tus) are readable before, and at 2 s gone for
// GET /v1/blobs, the list, a link minted before, resources/read,
// resources/stream, resources/list and list_blobs, while a blob without a
// TTL stays; the next sweep removes them from the store, and only them.
func TestLifecycleTTL(t *testing.T) {
	parallel(t)
	for _, be := range byteplaneBackends() {
		t.Run(be.name, func(t *testing.T) {
			t.Parallel()
			raw := be.new(t)
			clk := newLCClock()
			c := ttlServer(t, raw, clk)
			keys := storeWithTTL(t, c)
			stored := time.Now() // every expiry is at most this + 2 s
			if r := c.put("ttl/keep", []byte("stays"), nil); r.status != 201 {
				t.Fatalf("PUT keep: %d %s", r.status, r.body)
			}
			link := c.link("ttl/put-query", "")
			for _, k := range keys {
				if r := c.do("GET", "/v1/blobs/"+escapeKey(k), nil, nil); r.status != 200 {
					t.Fatalf("GET %s before its expiry: %d %s", k, r.status, r.body)
				}
			}
			clk.set(stored.Add(2 * time.Second))
			for _, k := range keys {
				if r := c.do("GET", "/v1/blobs/"+escapeKey(k), nil, nil); r.status != 404 || errCode(t, r) != "not_found" {
					t.Errorf("GET %s at 2 s: %d %s, want 404 not_found", k, r.status, r.body)
				}
			}
			checkGoneEverywhere(t, c, link, keys)
			if _, err := raw.Stat(t.Context(), "ttl/put-query"); err != nil {
				t.Fatalf("the store lost the blob before a sweep: %v", err)
			}
			r, err := c.srv.Sweeper().SweepOnce(t.Context())
			if err != nil || !r.Turn || r.Removed != len(keys) {
				t.Fatalf("sweep = %+v, %v; want its turn and %d removed", r, err, len(keys))
			}
			for _, k := range keys {
				if _, err := raw.Stat(t.Context(), k); !errors.Is(err, storage.ErrNotFound) {
					t.Errorf("raw Stat(%s) after the sweep: %v, want ErrNotFound", k, err)
				}
			}
			if _, err := raw.Stat(t.Context(), "ttl/keep"); err != nil {
				t.Errorf("the sweep removed the blob without a TTL: %v", err)
			}
		})
	}
}

// storeWithTTL stores a blob with ttlSeconds 2 through each upload
// surface and returns their keys.
func storeWithTTL(t *testing.T, c *bpClient) []string {
	t.Helper()
	if r := c.do("PUT", "/v1/blobs/ttl/put-query?ttlSeconds=2", strings.NewReader("q"), nil); r.status != 201 || !strings.Contains(string(r.body), `"expires":"`) {
		t.Fatalf("PUT ?ttlSeconds=2: %d %s", r.status, r.body)
	}
	if r := c.put("ttl/put-header", []byte("h"), map[string]string{"X-Mcp-Ttl-Seconds": "2"}); r.status != 201 {
		t.Fatalf("PUT x-mcp-ttl-seconds: %d %s", r.status, r.body)
	}
	mc := c.client(legacyVersion, "{}") // no Mcp-Param headers to mirror
	for _, args := range []string{
		`{"key":"ttl/tool-sink","ttlSeconds":2,"file":"data:text/plain;base64,aGVsbG8="}`,
		`{"file":"data:text/plain;base64,aGVsbG8=","key":"ttl/tool-spool","ttlSeconds":2}`,
	} {
		if res := mc.callTool("upload_file", args).tool(); res.IsError {
			t.Fatalf("upload_file %s: %+v", args, res)
		}
	}
	tc := &tusClient{t: t, base: c.base, hc: &http.Client{Timeout: time.Minute}}
	cr := tc.do("POST", "/v1/tus/", nil, map[string]string{"Upload-Length": "3",
		"Upload-Metadata": tusMeta("key", "ttl/tus", "ttlSeconds", "2")})
	if cr.StatusCode != 201 {
		t.Fatalf("tus create: %d", cr.StatusCode)
	}
	if r := tc.patch(cr.Header.Get("Location"), 0, []byte("tus"), nil); r.StatusCode != 204 {
		t.Fatalf("tus PATCH: %d", r.StatusCode)
	}
	return []string{"ttl/put-query", "ttl/put-header", "ttl/tool-sink", "ttl/tool-spool", "ttl/tus"}
}

// checkGoneEverywhere checks that the expired keys show nowhere: the
// list, the link, and the MCP reads and lists of both eras.
func checkGoneEverywhere(t *testing.T, c *bpClient, link string, keys []string) {
	t.Helper()
	if r := c.do("GET", "/v1/blobs?prefix=ttl/", nil, nil); r.status != 200 || !strings.Contains(string(r.body), "ttl/keep") {
		t.Fatalf("GET /v1/blobs: %d %s", r.status, r.body)
	} else {
		for _, k := range keys {
			if strings.Contains(string(r.body), `"`+k+`"`) {
				t.Errorf("GET /v1/blobs lists %s after its expiry: %s", k, r.body)
			}
		}
	}
	if r := c.do("GET", link, nil, nil); r.status != 404 {
		t.Errorf("a link minted before the expiry: %d %s, want 404", r.status, r.body)
	}
	for _, era := range []string{legacyVersion, modernVersion} {
		mc := c.client(era, streamCaps)
		uri := blobs.URI("ttl/put-query")
		if r := mc.call("resources/read", `{"uri":`+jsonString(uri)+`}`); r.msg.Error == nil {
			t.Errorf("%s resources/read of an expired blob: %d %.300s", era, r.status, r.body)
		}
		if r := mc.streamResource(uri); r.status == 200 && r.msg.Error == nil {
			t.Errorf("%s resources/stream of an expired blob: %d %.300s", era, r.status, r.body)
		}
		for _, lister := range []*mcpResponse{mc.call("resources/list", `{}`), mc.callTool("list_blobs", `{"prefix":"ttl/"}`)} {
			body := string(lister.body)
			if !strings.Contains(body, "ttl/keep") {
				t.Fatalf("%s %s: %.500s", era, lister.req.label(), body)
			}
			for _, k := range keys {
				if strings.Contains(body, k+`"`) {
					t.Errorf("%s %s shows %s after its expiry", era, lister.req.label(), k)
				}
			}
		}
	}
}

// badTTLs are the ttlSeconds every surface refuses: 0, negative, over
// the 10-year cap, past any integer type, not a number, a fraction.
var badTTLs = []string{"0", "-5", "315360001", "99999999999999999999999", "abc", "1.5", "1e3", ""}

// TestLifecycleTTLRefused: each upload surface refuses a bad ttlSeconds in
// its own terms, naming ttlSeconds, and stores nothing.
func TestLifecycleTTLRefused(t *testing.T) {
	parallel(t)
	be, err := localfs.Open(t.TempDir(), localfs.Options{}) // records, for tus
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { be.Close() })
	c := ttlServer(t, be, newLCClock())
	for _, v := range badTTLs {
		q := url.QueryEscape(v)
		if r := c.do("PUT", "/v1/blobs/bad/q?ttlSeconds="+q, strings.NewReader("x"), nil); r.status != 400 || errCode(t, r) != "invalid_ttl" || !strings.Contains(string(r.body), "ttlSeconds") {
			t.Errorf("PUT ?ttlSeconds=%q: %d %s, want 400 invalid_ttl naming ttlSeconds", v, r.status, r.body)
		}
		if v == "" {
			continue // an empty header is no header
		}
		if r := c.put("bad/h", []byte("x"), map[string]string{"X-Mcp-Ttl-Seconds": v}); r.status != 400 || errCode(t, r) != "invalid_ttl" {
			t.Errorf("PUT x-mcp-ttl-seconds %q: %d %s, want 400 invalid_ttl", v, r.status, r.body)
		}
		tc := &tusClient{t: t, base: c.base, hc: &http.Client{Timeout: time.Minute}}
		if r := tc.do("POST", "/v1/tus/", nil, map[string]string{"Upload-Length": "1",
			"Upload-Metadata": tusMeta("key", "bad/tus", "ttlSeconds", v)}); r.StatusCode != 400 || !strings.Contains(readAll(r), "ttlSeconds") {
			t.Errorf("tus ttlSeconds %q: %d, want 400 naming ttlSeconds", v, r.StatusCode)
		}
	}
	if r := c.put("bad/both", []byte("x"), nil); r.status != 201 {
		t.Fatal(r.status)
	}
	if r := c.do("PUT", "/v1/blobs/bad/both?ttlSeconds=5", strings.NewReader("x"), map[string]string{"X-Mcp-Ttl-Seconds": "6"}); r.status != 400 {
		t.Errorf("PUT with a query and a header that differ: %d %s", r.status, r.body)
	}
	for _, v := range []string{"0", "-5", "315360001", "99999999999999999999999", `"60"`, "1.5", "true"} {
		if r := c.do("POST", "/v1/uploads", strings.NewReader(`{"blobTtlSeconds":`+v+`}`), nil); r.status != 400 || !strings.Contains(string(r.body), "blobTtlSeconds") {
			t.Errorf("POST /v1/uploads blobTtlSeconds %s: %d %s", v, r.status, r.body)
		}
	}
	mc := c.client(legacyVersion, `{"elicitation":{}}`)
	for _, v := range []string{"0", "-5", "315360001", "99999999999999999999999", `"60"`, "1.5"} { // null is no ttlSeconds
		for _, call := range []struct{ tool, args string }{
			{"upload_file", `{"key":"bad/tool","ttlSeconds":` + v + `,"file":"data:text/plain;base64,aGVsbG8="}`},
			{"request_upload", `{"ttlSeconds":` + v + `}`},
		} {
			o := outcomeOf(mc.callTool(call.tool, call.args).msg)
			if !(o.isError || o.code == -32602) || !strings.Contains(o.text, "ttlSeconds") {
				t.Errorf("%s ttlSeconds %s: %+v, want isError or -32602 naming ttlSeconds", call.tool, v, o)
			}
		}
	}
	if r := c.do("GET", "/v1/blobs?prefix=bad/", nil, nil); strings.Contains(string(r.body), "bad/q") || strings.Contains(string(r.body), "bad/tool") || strings.Contains(string(r.body), "bad/h\"") {
		t.Errorf("a refused upload was stored: %s", r.body)
	}
}

// TestLifecyclePresignEndsWithBlob: a presigned URL for a blob with a TTL
// (resources/stream in redirect mode, on S3) lives no longer than the
// blob, not the link's 15 minutes.
func TestLifecyclePresignEndsWithBlob(t *testing.T) {
	parallel(t)
	be := byteplaneBackends()[1].new(t) // S3: it presigns
	c := newBPClient(t, Options{Backend: be, Blobs: blobs.Options{StreamMode: blobs.StreamRedirect}})
	if r := c.do("PUT", "/v1/blobs/ttl/p?ttlSeconds=100", strings.NewReader("p"), nil); r.status != 201 {
		t.Fatalf("PUT: %d %s", r.status, r.body)
	}
	r := c.client(legacyVersion, streamCaps).streamResource(blobs.URI("ttl/p"))
	loc, err := url.Parse(r.header.Get("Location"))
	if r.status != http.StatusFound || err != nil {
		t.Fatalf("resources/stream: %d %v", r.status, r.header)
	}
	if exp, err := strconv.Atoi(loc.Query().Get("X-Amz-Expires")); err != nil || exp > 100 || exp < 1 {
		t.Errorf("the presigned URL lives %q s, want at most the blob's 100", loc.Query().Get("X-Amz-Expires"))
	}
}

// TestLifecycleIncompleteTusReclaimed: an incomplete tus upload (a first
// part staged where its object will live: the S3 multipart upload, the
// local staged file) is reclaimed once past its Upload-Expires: the
// resumable sweep removes its records and its staged write, and its URL
// answers 404.
func TestLifecycleIncompleteTusReclaimed(t *testing.T) {
	parallel(t)
	for _, be := range byteplaneBackends() {
		t.Run(be.name, func(t *testing.T) {
			t.Parallel()
			raw := be.new(t)
			clk := newLCClock()
			c := ttlServer(t, raw, clk)
			tc := &tusClient{t: t, base: c.base, hc: &http.Client{Timeout: time.Minute}}
			const part = 5 << 20 // S3's smallest part: a staged part exists
			cr := tc.do("POST", "/v1/tus/", nil, map[string]string{"Upload-Length": strconv.Itoa(part + 10),
				"Upload-Metadata": tusMeta("key", "tus/incomplete")})
			if cr.StatusCode != 201 {
				t.Fatalf("tus create: %d", cr.StatusCode)
			}
			loc := cr.Header.Get("Location")
			if r := tc.patch(loc, 0, tusPayload(part), nil); r.StatusCode != 204 {
				t.Fatalf("PATCH: %d", r.StatusCode)
			}
			staged := tusStagedOf(t, raw)
			c.srv.svc.SweepUploadsOnce(t.Context())
			if tc.offset(loc) != part {
				t.Fatal("a live upload was swept")
			}
			clk.set(time.Now().Add(25 * time.Hour)) // past Upload-Expires (24 h)
			c.srv.svc.SweepUploadsOnce(t.Context())
			if r := tc.do("HEAD", loc, nil, nil); r.StatusCode != 404 {
				t.Errorf("HEAD of the swept upload: %d, want 404", r.StatusCode)
			}
			var left []string
			storage.RecorderOf(raw).ListRecords(t.Context(), "tus", func(n string) bool { left = append(left, n); return true })
			if len(left) != 0 {
				t.Errorf("records left after the sweep: %q", left)
			}
			_, err := storage.StagerOf(raw).PutStaged(t.Context(), staged, 2, part, []byte("late"))
			if err == nil {
				t.Errorf("the swept upload's staged write still takes parts")
			}
		})
	}
}

// tusStagedOf returns the staged write id of the one tus upload on raw.
func tusStagedOf(t *testing.T, raw storage.Backend) string {
	t.Helper()
	rec := storage.RecorderOf(raw)
	var info string
	rec.ListRecords(t.Context(), "tus", func(n string) bool {
		if strings.HasSuffix(n, "/info") {
			info = n
		}
		return true
	})
	b, _, err := rec.GetRecord(t.Context(), info)
	var u struct{ Staged string }
	if err != nil || json.Unmarshal(b, &u) != nil || u.Staged == "" {
		t.Fatalf("the upload's record %q: %v %s", info, err, b)
	}
	return u.Staged
}
