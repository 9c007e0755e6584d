package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/mcpblob/mcpblob/core/mcp"
	"github.com/mcpblob/mcpblob/core/mcp/limits"
	"github.com/mcpblob/mcpblob/core/server/blobsvc"
	"github.com/mcpblob/mcpblob/core/server/blobsvc/resumable"
	"github.com/mcpblob/mcpblob/core/token"
	"github.com/mcpblob/mcpblob/storage/lifecycle"
)

// claimFiles counts the claim files of the local store in dir (its
// reserved folder .mcpblob/claims, every set but the sweep rounds' (tus
// and lifecycle), which a node takes when it starts and every round,
// whatever the clients do).
func claimFiles(t *testing.T, dir string) int {
	t.Helper()
	n := 0
	err := filepath.WalkDir(filepath.Join(dir, ".mcpblob", "claims"), func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() && (d.Name() == resumable.SweepSet || d.Name() == lifecycle.SweepSet) {
			return filepath.SkipDir
		}
		if err == nil && d.Type().IsRegular() {
			n++
		}
		return err
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	return n
}

// byteplaneSend sends method url with body and headers, returning status,
// headers and body.
func byteplaneSend(t *testing.T, method, url string, body []byte, hdr map[string]string) httpResp {
	t.Helper()
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return httpResp{status: resp.StatusCode, header: resp.Header, body: b}
}

// wantClaimRefusal checks a refusal by the claims rate: 429, Retry-After
// within the minute, the error too_many_claims.
func wantClaimRefusal(t *testing.T, what string, r httpResp) {
	t.Helper()
	var e struct {
		Error struct{ Code, Message string }
	}
	_ = json.Unmarshal(r.body, &e)
	secs, err := strconv.Atoi(r.header.Get("Retry-After"))
	if r.status != http.StatusTooManyRequests || err != nil || secs < 1 || secs > 60 || e.Error.Code != "too_many_claims" {
		t.Errorf("%s: %d, Retry-After %q, %s; want 429 too_many_claims with Retry-After 1..60",
			what, r.status, r.header.Get("Retry-After"), r.body)
	}
}

// TestByteplaneClaimsRate: every single-use redemption (a one-byte Range
// is enough) and every upload start writes a claim to the shared store;
// 71946bf wrote one per request without bound (1,493 claim files in 5 s
// from one key). Now each is charged to the token's principal against the
// claims rate before it is written: over the rate the answer is 429 with
// Retry-After, the store's claims stop growing, and the refused link is
// not used up (another node, with a rate of its own, still serves it once).
func TestByteplaneClaimsRate(t *testing.T) {
	parallel(t)
	const rate = 4
	dir := t.TempDir()
	be := newLocalStoreAt(t, dir)
	putObject(t, be, "f.txt", []byte("hello"))
	base, srv := startTestServer(t, Options{Backend: be, MCP: mcp.Options{Limits: limits.Limits{ClaimsPerMinute: rate}}})
	node2, _ := startTestServer(t, Options{Backend: be}) // same store and keys
	kr := srv.opts.Keyring
	link := func(principal string) string {
		l, err := kr.MintDownload(base, token.DownloadGrant{Principal: principal, Key: "f.txt", SingleUse: true, TTL: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		return l.Token
	}
	oneByte := map[string]string{"Range": "bytes=0-0"}
	var refused []string
	for i := range 3 * rate {
		tok := link("flooder")
		r := byteplaneSend(t, "GET", base+"/d/"+tok, nil, oneByte)
		if i < rate {
			if r.status != http.StatusPartialContent {
				t.Fatalf("redemption %d, within the rate: %d %s", i, r.status, r.body)
			}
			continue
		}
		wantClaimRefusal(t, "redemption "+strconv.Itoa(i), r)
		refused = append(refused, tok)
	}
	if n := claimFiles(t, dir); n != rate {
		t.Errorf("%d claim files after %d redemptions at a rate of %d; want %d", n, 3*rate, rate, rate)
	}
	if r := byteplaneSend(t, "GET", base+"/d/"+link("victim"), nil, oneByte); r.status != http.StatusPartialContent {
		t.Errorf("another principal's link while the flooder is refused: %d %s", r.status, r.body)
	}
	if r := byteplaneSend(t, "GET", node2+"/d/"+refused[0], nil, nil); r.status != http.StatusOK || string(r.body) != "hello" {
		t.Errorf("a refused link on another node: %d %s; want 200: the refusal must not use it up", r.status, r.body)
	}
	if r := byteplaneSend(t, "GET", node2+"/d/"+refused[0], nil, nil); r.status != http.StatusNotFound {
		t.Errorf("the same link again: %d; want 404", r.status)
	}
	checkUploadClaimsRate(t, dir, base, node2, kr, rate)
}

// checkUploadClaimsRate drives upload starts (PUT /u/{token}) of one
// principal past the claims rate: the claim files stop growing and a
// refused upload link still works on node2.
func checkUploadClaimsRate(t *testing.T, dir, base, node2 string, kr *token.Keyring, rate int) {
	before := claimFiles(t, dir)
	var refused string
	for i := range 3 * rate {
		l, err := kr.MintUpload(base, token.Upload{Principal: "uploader", MaxSize: 1 << 10})
		if err != nil {
			t.Fatal(err)
		}
		r := byteplaneSend(t, "PUT", l.URL, []byte("data"), map[string]string{"Content-Type": "text/plain"})
		if i < rate {
			if r.status != http.StatusCreated {
				t.Fatalf("upload %d, within the rate: %d %s", i, r.status, r.body)
			}
			continue
		}
		wantClaimRefusal(t, "upload "+strconv.Itoa(i), r)
		refused = l.Token
	}
	if n := claimFiles(t, dir) - before; n != rate {
		t.Errorf("%d claim files written by %d upload starts at a rate of %d; want %d", n, 3*rate, rate, rate)
	}
	r := byteplaneSend(t, "PUT", node2+"/u/"+refused, []byte("data"), map[string]string{"Content-Type": "text/plain"})
	if r.status != http.StatusCreated {
		t.Errorf("a refused upload link on another node: %d %s; want 201", r.status, r.body)
	}
}

// TestDownloadRedirectClaimsRate: a single-use link answered with a 302
// to a presigned URL (S3, DownloadRedirect) is charged the same way.
func TestDownloadRedirectClaimsRate(t *testing.T) {
	parallel(t)
	be := byteplaneBackends()[1].new(t)
	putObject(t, be, "r.bin", []byte("hello"))
	base, srv := startTestServer(t, Options{
		Backend: be,
		MCP:     mcp.Options{Limits: limits.Limits{ClaimsPerMinute: 1}},
		Service: blobsvc.Options{DownloadRedirect: true},
	})
	node2, _ := startTestServer(t, Options{Backend: be, Service: blobsvc.Options{DownloadRedirect: true}})
	link := func(principal string) string {
		l, err := srv.opts.Keyring.MintDownload(base, token.DownloadGrant{Principal: principal, Key: "r.bin", SingleUse: true, TTL: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		return l.Token
	}
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	get := func(u string) httpResp {
		resp, err := noRedirect.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return httpResp{status: resp.StatusCode, header: resp.Header, body: b}
	}
	if r := get(base + "/d/" + link("flooder")); r.status != http.StatusFound {
		t.Fatalf("first link: %d %s", r.status, r.body)
	}
	second := link("flooder")
	r := get(base + "/d/" + second)
	wantClaimRefusal(t, "second link over a rate of 1", r)
	if r.header.Get("Location") != "" {
		t.Errorf("the refusal redirects to %q", r.header.Get("Location"))
	}
	if r := get(node2 + "/d/" + second); r.status != http.StatusFound {
		t.Errorf("the refused link on another node: %d %s; want 302", r.status, r.body)
	}
}
