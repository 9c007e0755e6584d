package blobsvc

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/mcpblob/mcpblob/core/blobs"
	"github.com/mcpblob/mcpblob/core/server/gate"
	"github.com/mcpblob/mcpblob/core/server/onetime"
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
		gate.MethodNotAllowed(ctx, "GET, HEAD")
		return
	}
	tok := strings.TrimPrefix(string(ctx.Path()), "/d/")
	c, err := s.env.Keyring.Verify(tok, token.PurposeDownload)
	switch {
	case errors.Is(err, token.ErrExpired):
		gate.APIError(ctx, http.StatusGone, "expired", "this link has expired; ask for a new one")
		return
	case err != nil:
		gate.APIError(ctx, http.StatusUnauthorized, "unauthorized", "invalid link")
		return
	case c.Object == "" || storage.ValidateKey(c.Object) != nil:
		gate.APIError(ctx, http.StatusUnauthorized, "unauthorized", "invalid link")
		return
	}
	if !s.linkCaller(ctx, c) {
		return
	}
	if s.opts.DownloadRedirect && ctx.IsGet() { // a presigned GET does not answer HEAD: serve HEAD here
		if p, ok := s.env.Backend.(storage.Presigner); ok {
			s.redirectDownload(ctx, p, c)
			return
		}
	}
	bs := blobServe{key: c.Object, version: c.Version, link: true, filename: c.Filename, alwaysDisposition: true,
		facts: func(info storage.Info) bool { return linkFactsHold(ctx.QueryArgs(), c, info) }} // linkfacts.go
	if c.SingleUse {
		bs.consume = func() error { return s.facts.ClaimToken(context.Background(), onetime.Links, c, s.mcp.Claims()) }
	}
	s.serveBlob(ctx, bs)
}

func (s *Server) redirectDownload(ctx *fasthttp.RequestCtx, p storage.Presigner, c token.Claims) {
	info, err := s.env.Backend.Stat(context.Background(), c.Object)
	if err = linkedVersion(info, c.Version, err); err != nil {
		s.blobStorageError(ctx, blobServe{key: c.Object, link: true}, "stat", err)
		return
	}
	if !linkFactsHold(ctx.QueryArgs(), c, info) {
		refuseLinkFacts(ctx)
		return
	}
	if c.SingleUse {
		if err := s.facts.ClaimToken(context.Background(), onetime.Links, c, s.mcp.Claims()); err != nil {
			s.refuseRedeemed(ctx, err)
			return
		}
	}
	name := c.Filename
	if name == "" {
		name = blobs.DownloadName(info)
	}
	ttl := storage.CapTTL(presignTTL(c.Expires), info.Expires, time.Now()) // the URL ends with the blob
	u, err := p.PresignGet(context.Background(), c.Object, ttl, storage.PresignOptions{
		ContentType: mediaTypeOf(info), ContentDisposition: blobs.ContentDisposition("attachment", name)})
	if err != nil {
		s.apiStorageError(ctx, "presign", c.Object, err)
		return
	}
	ctx.Response.Header.Set("Cache-Control", "no-store")
	ctx.Redirect(u.String(), http.StatusFound)
}

// refuseRedeemed answers a single-use link whose redemption failed: 404
// when it was already used, 429 when its principal's claims rate is used
// up, a server error when the store failed.
func (s *Server) refuseRedeemed(ctx *fasthttp.RequestCtx, err error) {
	if gate.RefuseClaimRate(ctx, err) {
		return
	}
	if errors.Is(err, onetime.ErrClaimed) {
		gate.APIError(ctx, http.StatusNotFound, "not_found", "this single-use link was already used")
		return
	}
	s.log.Error("server: recording a single-use link's redemption failed", "err", err)
	gate.APIError(ctx, http.StatusServiceUnavailable, "unavailable", "the link cannot be redeemed right now; try again")
}

// linkCaller checks the caller of a download link when links need the
// minting principal's credential (Options.LinksNeedCredential): a request
// without it, or with another principal's, is refused. On refusal it
// answers and reports false.
func (s *Server) linkCaller(ctx *fasthttp.RequestCtx, c token.Claims) bool {
	if !s.opts.LinksNeedCredential || !s.gate.Auth.Enabled() {
		return true
	}
	id, refused := s.gate.Identify(ctx)
	if refused != nil {
		s.gate.Refuse(ctx, refused)
		return false
	}
	if id.Principal != c.Principal && !id.Admin() {
		gate.APIError(ctx, http.StatusForbidden, "forbidden", "the link belongs to another principal")
		return false
	}
	return true
}

// linkedVersion is err, or ErrNotFound when a link minted for version (an
// ETag; "" for any) finds info, another version: the blob was replaced
// since, and a link is for the version it was minted for.
func linkedVersion(info storage.Info, version string, err error) error {
	if err == nil && version != "" && info.ETag != version {
		return storage.ErrNotFound
	}
	return err
}
