package server

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/mcpblob/mcpblob/core/mcp"
	"github.com/mcpblob/mcpblob/core/mcp/limits"
	"github.com/mcpblob/mcpblob/core/server/front"
	"github.com/mcpblob/mcpblob/core/token"
	"github.com/mcpblob/mcpblob/storage"
)

// TestSingleUseLinkFlood: one client minting and redeeming more single-use
// links than any in-memory set holds (bd4921f kept 65,536 and then refused
// every new single-use link for days) must not disable anyone's links:
// every link works once, and once only. The claims rate, which would
// refuse the flood after 600 a minute (TestByteplaneClaimsRate), is off
// here: this is about the store's record of used links.
func TestSingleUseLinkFlood(t *testing.T) {
	parallel(t)
	n := 70_000
	if testing.Short() {
		n = 2_000
	}
	be := newLocalStore(t)
	putObject(t, be, "f.txt", []byte("hello"))
	srv, err := New(Options{Backend: be, MCP: mcp.Options{Limits: limits.Limits{ClaimsPerMinute: -1}}, Front: front.Options{Listen: "127.0.0.1:0"}})
	if err != nil {
		t.Fatal(err)
	}
	get := func(tok string) string {
		var req fasthttp.Request
		req.SetRequestURI("http://127.0.0.1/d/" + tok)
		out := benchServe(srv, &req)
		status, _, _ := strings.Cut(string(out), "\r\n")
		return status
	}
	mint := func(principal string) string {
		l, err := srv.opts.Keyring.MintDownload(srv.opts.PublicURL, token.DownloadGrant{
			Principal: principal, Key: "f.txt", SingleUse: true, TTL: 24 * time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		return l.Token
	}
	first := mint("flooder")
	if s := get(first); !strings.Contains(s, "200") {
		t.Fatalf("first link: %s", s)
	}
	for i := range n {
		if s := get(mint("flooder")); !strings.Contains(s, "200") {
			t.Fatalf("flood link %d of %d: %s", i, n, s)
		}
	}
	victim := mint("victim")
	if s := get(victim); !strings.Contains(s, "200") {
		t.Fatalf("another principal's link after %d redemptions: %s; want 200", n, s)
	}
	for _, tok := range []string{victim, first} {
		if s := get(tok); !strings.Contains(s, "404") {
			t.Errorf("used link redeemed again: %s; want 404", s)
		}
	}
}

// TestUploadLinkOnce: concurrent uploads with one upload link (no fixed
// key), each naming its own file, store exactly one object; bd4921f
// stored five of ten. A failed
// upload gives the reservation back, so the link can be retried.
func TestUploadLinkOnce(t *testing.T) {
	parallel(t)
	for _, be := range byteplaneBackends() {
		t.Run(be.name, func(t *testing.T) {
			t.Parallel()
			backend := be.new(t)
			base, srv := startTestServer(t, Options{Backend: backend})
			link, err := srv.opts.Keyring.MintUpload(base, token.Upload{MaxSize: 8 << 20})
			if err != nil {
				t.Fatal(err)
			}
			post := func(name string, size int) int {
				ctype, body := multipartBody(t, [3]string{name, "application/octet-stream", strings.Repeat("x", size)})
				req, _ := http.NewRequest("POST", link.URL, bytes.NewReader(body))
				req.Header.Set("Content-Type", ctype)
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Error(err)
					return 0
				}
				resp.Body.Close()
				return resp.StatusCode
			}
			if got := post("big.bin", 9<<20); got != http.StatusRequestEntityTooLarge {
				t.Fatalf("too-large upload: %d; want 413", got)
			}
			statuses := map[int]int{}
			var mu sync.Mutex
			var wg sync.WaitGroup
			for i := range 10 {
				wg.Go(func() {
					code := post(fmt.Sprintf("f%d.bin", i), 2<<20)
					mu.Lock()
					statuses[code]++
					mu.Unlock()
				})
			}
			wg.Wait()
			if statuses[201] != 1 || statuses[409] != 9 {
				t.Errorf("10 concurrent uploads with one link: %v; want one 201 and nine 409", statuses)
			}
			page, err := backend.List(context.Background(), "uploads/"+link.UploadID+"/", "", 100)
			if err != nil || len(page.Items) != 1 {
				t.Errorf("objects stored under the upload id: %d (%v); want 1", len(page.Items), err)
			}
		})
	}
}

func putObject(t *testing.T, b storage.Backend, key string, data []byte) {
	t.Helper()
	w, err := b.Create(context.Background(), key, storage.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// TestSingleUseLifetimeBound: a single-use link is recorded in the store
// until it expires, so its lifetime is bounded (bd4921f minted 7-day ones).
func TestSingleUseLifetimeBound(t *testing.T) {
	parallel(t)
	base, _ := startTestServer(t, Options{})
	for _, tc := range []struct {
		body string
		want int
	}{
		{`{"key":"k","singleUse":true,"ttlSeconds":604800}`, 400},
		{`{"key":"k","singleUse":true,"ttlSeconds":86401}`, 400},
		{`{"key":"k","singleUse":true,"ttlSeconds":86400}`, 404}, // allowed; the blob does not exist
		{`{"key":"k","ttlSeconds":604800}`, 404},
	} {
		resp, err := http.Post(base+"/v1/links", "application/json", strings.NewReader(tc.body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("POST /v1/links %s: %d; want %d", tc.body, resp.StatusCode, tc.want)
		}
	}
}
