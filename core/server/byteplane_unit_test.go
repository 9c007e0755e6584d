package server

import (
	"context"
	"mime"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcpblob/mcpblob/core/blobs"
	"github.com/mcpblob/mcpblob/storage"
)

func TestContentDisposition(t *testing.T) {
	parallel(t)
	for _, name := range []string{"a.txt", "résumé ü.pdf", `we"ird\name;x=1.txt`, "日本語.bin", "100% sure.txt"} {
		v := blobs.ContentDisposition("attachment", name)
		_, params, err := mime.ParseMediaType(v)
		if err != nil || params["filename"] != name {
			t.Errorf("ContentDisposition(%q) = %q: parses as %q, %v", name, v, params["filename"], err)
		}
		for _, c := range v {
			if c < 0x20 || c > 0x7e {
				t.Errorf("ContentDisposition(%q) = %q: not ASCII", name, v)
				break
			}
		}
	}
}

// changingBackend reports a stale ETag from its first `stale` Stat calls, as
// if the blob were replaced between Stat and Open.
type changingBackend struct {
	storage.Backend
	stale atomic.Int32
}

func (b *changingBackend) Stat(ctx context.Context, key string) (storage.Info, error) {
	info, err := b.Backend.Stat(ctx, key)
	if b.stale.Add(-1) >= 0 {
		info.ETag = `"stale"`
	}
	return info, err
}

func TestServeBlobReplacedMidway(t *testing.T) {
	parallel(t)
	be := &changingBackend{Backend: byteplaneBackends()[0].new(t)}
	c := newBPClient(t, Options{Backend: be})
	c.put("x", []byte("current"), nil)
	be.stale.Store(1) // one replace: served on the retry
	if r := c.do("GET", "/v1/blobs/x", nil, nil); r.status != 200 || string(r.body) != "current" || r.header.Get("ETag") == `"stale"` {
		t.Fatalf("GET after one replace: %d %q %v", r.status, r.body, r.header)
	}
	// A link is for the version it was minted for: a replaced blob is gone
	// for it (and the single-use link is not consumed by the refusal).
	once := c.link("x", `,"singleUse":true`)
	be.stale.Store(1)
	if r := c.do("GET", once, nil, nil); r.status != 404 || strings.Contains(string(r.body), `"x"`) {
		t.Fatalf("link GET while replaced: %d %q", r.status, r.body)
	}
	if r := c.do("GET", once, nil, nil); r.status != 200 || string(r.body) != "current" {
		t.Fatalf("link GET of its own version: %d %q", r.status, r.body)
	}
	be.stale.Store(10) // keeps changing: 503, no bytes
	if r := c.do("GET", "/v1/blobs/x", nil, nil); r.status != 503 || r.header.Get("Retry-After") == "" {
		t.Fatalf("GET of an ever-changing blob: %d %q", r.status, r.body)
	}
}
