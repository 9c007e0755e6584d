package server

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/mcpblob/mcpblob/core/blobs"
	"github.com/mcpblob/mcpblob/core/token"
	"github.com/mcpblob/mcpblob/storage"
)

// serveDownload serves GET|HEAD /d/{token}: a signed download link. The
// token is the credential (no API key): 401 for a malformed, tampered or
// wrong-purpose token, 410 once expired (clients re-issue resources/stream),
// 404 for an unknown object or a single-use link already used. Bytes go out
// by sendfile from the local store; from S3 by a streamed copy, or a 302 to
// a presigned GET when Options.DownloadRedirect is set.
func (s *Server) serveDownload(ctx *fasthttp.RequestCtx) {
	method := string(ctx.Method())
	if method != http.MethodGet && method != http.MethodHead {
		methodNotAllowed(ctx, "GET, HEAD")
		return
	}
	tok := strings.TrimPrefix(string(ctx.Path()), "/d/")
	c, err := s.opts.Keyring.Verify(tok, token.PurposeDownload)
	switch {
	case errors.Is(err, token.ErrExpired):
		apiError(ctx, http.StatusGone, "expired", "this link has expired; ask for a new one")
		return
	case err != nil:
		apiError(ctx, http.StatusUnauthorized, "unauthorized", "invalid link")
		return
	case c.Object == "" || storage.ValidateKey(c.Object) != nil:
		apiError(ctx, http.StatusUnauthorized, "unauthorized", "invalid link")
		return
	}
	if c.SingleUse && s.replay.used(c.Nonce) {
		apiError(ctx, http.StatusNotFound, "not_found", "this single-use link was already used")
		return
	}
	if s.opts.DownloadRedirect && ctx.IsGet() { // a presigned GET does not answer HEAD: serve HEAD here
		if p, ok := s.opts.Backend.(storage.Presigner); ok {
			s.redirectDownload(ctx, p, c)
			return
		}
	}
	bs := blobServe{key: c.Object, filename: c.Filename, alwaysDisposition: true}
	if c.SingleUse {
		bs.consume = func() bool { return s.replay.consume(c.Nonce, c.Expires) }
	}
	s.serveBlob(ctx, bs)
}

func (s *Server) redirectDownload(ctx *fasthttp.RequestCtx, p storage.Presigner, c token.Claims) {
	info, err := s.opts.Backend.Stat(context.Background(), c.Object)
	if err != nil {
		s.apiStorageError(ctx, "stat", c.Object, err)
		return
	}
	if c.SingleUse && !s.replay.consume(c.Nonce, c.Expires) {
		apiError(ctx, http.StatusNotFound, "not_found", "this single-use link was already used")
		return
	}
	name := c.Filename
	if name == "" {
		name = blobs.DownloadName(info)
	}
	u, err := p.PresignGet(context.Background(), c.Object, presignTTL(c.Expires), storage.PresignOptions{
		ContentType: mediaTypeOf(info), ContentDisposition: blobs.ContentDisposition("attachment", name)})
	if err != nil {
		s.apiStorageError(ctx, "presign", c.Object, err)
		return
	}
	ctx.Response.Header.Set("Cache-Control", "no-store")
	ctx.Redirect(u.String(), http.StatusFound)
}

// replaySet remembers the nonces of used single-use links until they expire.
// It lives in this process only: behind a load balancer a single-use link
// can be used once per node (docs/byte-plane.md discusses the trade-off; a
// shared store would make it exact). It holds at most maxReplay entries;
// when full after dropping expired ones, new single-use downloads are
// refused (404) rather than letting a used link be replayed.
type replaySet struct {
	mu   sync.Mutex
	seen map[string]time.Time
	now  func() time.Time
}

const maxReplay = 1 << 16

func (r *replaySet) used(nonce string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.seen[nonce]
	return ok
}

// consume records nonce until exp; false when it was already recorded or
// the set is full.
func (r *replaySet) consume(nonce string, exp time.Time) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.seen == nil {
		r.seen = map[string]time.Time{}
	}
	if _, ok := r.seen[nonce]; ok {
		return false
	}
	if len(r.seen) >= maxReplay {
		now := time.Now()
		if r.now != nil {
			now = r.now()
		}
		for n, e := range r.seen {
			if !now.Before(e) {
				delete(r.seen, n)
			}
		}
		if len(r.seen) >= maxReplay {
			return false
		}
	}
	if exp.IsZero() {
		exp = time.Now().Add(token.DefaultDownloadTTL)
	}
	r.seen[nonce] = exp
	return true
}
