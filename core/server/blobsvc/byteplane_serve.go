package blobsvc

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/mcpblob/mcpblob/core/blobs"
	"github.com/mcpblob/mcpblob/core/mcp/resstream"
	"github.com/mcpblob/mcpblob/core/server/bodystream"
	"github.com/mcpblob/mcpblob/core/server/byterange"
	"github.com/mcpblob/mcpblob/core/server/gate"
	"github.com/mcpblob/mcpblob/storage"
)

// blobServe says how serveBlob answers a GET or HEAD of one object.
type blobServe struct {
	key string
	// store is where key is (the caller's view); nil: the whole store.
	store storage.Backend
	// version, when set, is the only ETag served: a link minted for one
	// version of an object does not serve the next (404).
	version string
	// link: the request came with a download link, whose errors must not
	// name the key.
	link bool
	// filename overrides the Content-Disposition filename.
	filename string
	// alwaysDisposition sends Content-Disposition even without a stored
	// filename (the key's last segment), as download links do.
	alwaysDisposition bool
	// consume runs once the object is known to exist and bytes are about to
	// be sent (GET 200/206); an error refuses (404 for a used single-use link).
	consume func() error
	// facts, when set, checks the facts a link's query states (linkfacts.go).
	facts func(storage.Info) bool
}

// blobStorageError answers a storage error of serving bs. A download link
// hides its object's key, so the answer must too: a missing or replaced
// object is a plain 404.
func (s *Server) blobStorageError(ctx *fasthttp.RequestCtx, bs blobServe, op string, err error) {
	if bs.link && errors.Is(err, storage.ErrNotFound) {
		gate.APIError(ctx, http.StatusNotFound, "not_found", "the linked blob was deleted or replaced")
		return
	}
	s.apiStorageError(ctx, op, bs.key, err)
}

// backend is the store bs reads from.
func (bs blobServe) backend(s *Server) storage.Backend {
	if bs.store != nil {
		return bs.store
	}
	return s.env.Backend
}

// etagMatch reports whether an If-None-Match list names etag (weak
// comparison, as RFC 9110 requires for If-None-Match) or is "*".
func etagMatch(list, etag string) bool {
	for part := range strings.SplitSeq(list, ",") {
		p := strings.TrimSpace(part)
		if p == "*" {
			return true
		}
		if strings.TrimPrefix(p, "W/") == strings.TrimPrefix(etag, "W/") && etag != "" {
			return true
		}
	}
	return false
}

// ifRangeHolds evaluates If-Range: a strong ETag must match exactly; a date
// must equal Last-Modified (whole seconds).
func ifRangeHolds(v string, info storage.Info) bool {
	v = strings.TrimSpace(v)
	if v == "" {
		return true
	}
	if strings.HasPrefix(v, `"`) {
		return info.ETag != "" && !strings.HasPrefix(info.ETag, "W/") && v == info.ETag
	}
	t, err := http.ParseTime(v)
	return err == nil && !info.ModTime.IsZero() && info.ModTime.Unix() == t.Unix()
}

// serveBlob answers GET or HEAD for one object with validators, Range,
// If-Range, If-None-Match (304) and 416; bytes go out by sendfile
// from local files and by a streamed copy otherwise.
func (s *Server) serveBlob(ctx *fasthttp.RequestCtx, bs blobServe) {
	for attempt := 0; ; attempt++ {
		if !s.serveBlobAttempt(ctx, bs, attempt) {
			return
		}
	}
}

// serveBlobAttempt is one try of serveBlob: it stats the blob, sets the
// headers and answers, unless the blob was replaced between Stat and Open
// on an early attempt, when it resets the response and reports that the
// caller should try again.
func (s *Server) serveBlobAttempt(ctx *fasthttp.RequestCtx, bs blobServe, attempt int) (retry bool) {
	h := &ctx.Response.Header
	info, err := bs.backend(s).Stat(context.Background(), bs.key)
	if err = linkedVersion(info, bs.version, err); err != nil {
		s.blobStorageError(ctx, bs, "stat", err)
		return false
	}
	if bs.facts != nil && !bs.facts(info) {
		refuseLinkFacts(ctx)
		return false
	}
	setBlobMetaHeaders(h, info)
	if inm := string(ctx.Request.Header.Peek("If-None-Match")); inm != "" && etagMatch(inm, info.ETag) {
		ctx.SetStatusCode(http.StatusNotModified)
		return false
	}
	setBlobContentHeaders(h, bs, info)
	off, n, status, ok := blobRange(ctx, info)
	if !ok {
		return false
	}
	if ctx.IsHead() {
		ctx.SetStatusCode(status)
		h.SetContentLength(int(n))
		return false
	}
	if bs.consume != nil && attempt == 0 {
		if err := bs.consume(); err != nil {
			ctx.Response.Reset()
			s.refuseRedeemed(ctx, err)
			return false
		}
	}
	return s.sendBlobBody(ctx, bs, info, attempt, off, n, status)
}

// setBlobMetaHeaders sets the headers every answer about a blob carries,
// 304 included.
func setBlobMetaHeaders(h *fasthttp.ResponseHeader, info storage.Info) {
	h.Set("Cache-Control", "no-store")
	h.Set("Accept-Ranges", "bytes")
	// SEP-2532: a downloadUrl answers with the headers of a direct
	// resources/stream answer, MCP-Resource-Uri included.
	h.Set(resstream.HeaderResourceURI, blobs.URI(info.Key))
	if info.ETag != "" {
		h.Set("ETag", info.ETag)
	}
	if info.SHA256 != "" {
		h.Set("x-mcp-sha256", info.SHA256)
	}
	if !info.ModTime.IsZero() {
		h.Set("Last-Modified", info.ModTime.UTC().Format(http.TimeFormat))
	}
}

// setBlobContentHeaders sets Content-Type, the safety headers of stored
// bytes (blobs.SafetyHeaders) and Content-Disposition: an attachment when
// there is a name to give, and always for an active type, which a browser
// must never render on this origin.
func setBlobContentHeaders(h *fasthttp.ResponseHeader, bs blobServe, info storage.Info) {
	mt := mediaTypeOf(info)
	h.Set("Content-Type", mt)
	for _, kv := range blobs.SafetyHeaders(mt) {
		h.Set(kv[0], kv[1])
	}
	name := bs.filename
	if name == "" && (info.Filename != "" || bs.alwaysDisposition || !blobs.Inert(mt)) {
		name = blobs.DownloadName(info)
	}
	if name != "" {
		h.Set("Content-Disposition", blobs.ContentDisposition("attachment", name))
	}
}

// blobRange works out which bytes of the blob go out and with which status,
// honouring Range (RFC 9110 §14, package byterange) and If-Range. When the
// range is not satisfiable it answers 416 itself and reports !ok.
func blobRange(ctx *fasthttp.RequestCtx, info storage.Info) (off, n int64, status int, ok bool) {
	h := &ctx.Response.Header
	rv := string(ctx.Request.Header.Peek("Range"))
	if rv == "" || !ifRangeHolds(string(ctx.Request.Header.Peek("If-Range")), info) {
		return 0, info.Size, http.StatusOK, true
	}
	r, outcome := byterange.Select(rv, info.Size)
	switch outcome {
	case byterange.Ignore:
		return 0, info.Size, http.StatusOK, true
	case byterange.Unsatisfiable:
		h.Del("Content-Disposition")
		h.Set("Content-Range", "bytes */"+strconv.FormatInt(info.Size, 10))
		gate.APIError(ctx, http.StatusRequestedRangeNotSatisfiable, "range_not_satisfiable",
			"no range starts before the end of the "+strconv.FormatInt(info.Size, 10)+"-byte blob")
		return 0, 0, 0, false
	}
	h.Set("Content-Range", "bytes "+strconv.FormatInt(r.Offset, 10)+"-"+strconv.FormatInt(r.Offset+r.Length-1, 10)+"/"+strconv.FormatInt(info.Size, 10))
	return r.Offset, r.Length, http.StatusPartialContent, true
}

// sendBlobBody opens the blob's bytes and streams them out. When the blob
// was replaced since info was read it resets the response and asks for a
// retry, or after the third attempt answers 503.
func (s *Server) sendBlobBody(ctx *fasthttp.RequestCtx, bs blobServe, info storage.Info, attempt int, off, n int64, status int) (retry bool) {
	var rng *storage.Range
	if status == http.StatusPartialContent || n != info.Size {
		rng = &storage.Range{Offset: off, Length: n}
	}
	// Bound to the response, not the handler: S3 bodies stream after
	// the handler returns.
	octx, cancel := context.WithCancel(context.Background())
	rc, oinfo, err := bs.backend(s).Open(octx, bs.key, rng)
	if err != nil {
		cancel()
		s.blobStorageError(ctx, bs, "open", err)
		return false
	}
	if oinfo.ETag != info.ETag {
		// Replaced between Stat and Open: start over, so the headers
		// describe the version whose bytes go out.
		rc.Close()
		cancel()
		ctx.Response.Reset()
		if attempt < 2 {
			return true
		}
		ctx.Response.Header.Set("Retry-After", "1")
		gate.APIError(ctx, http.StatusServiceUnavailable, "internal", "the blob kept changing while being read; retry")
		return false
	}
	ctx.SetStatusCode(status)
	bodystream.SendReader(ctx, s.tel.Download(&cancelReadCloser{ReadCloser: rc, cancel: cancel}), n, s.env.WriteTimeout)
	return false
}

func mediaTypeOf(info storage.Info) string {
	if info.MediaType == "" {
		return storage.DefaultMediaType
	}
	return info.MediaType
}

// cancelReadCloser ends a context when its reader closes.
type cancelReadCloser struct {
	io.ReadCloser
	cancel func()
}

// Unwrap exposes the storage reader (for the sendfile path).
func (c *cancelReadCloser) Unwrap() io.ReadCloser { return c.ReadCloser }

func (c *cancelReadCloser) Close() error {
	err := c.ReadCloser.Close()
	c.cancel()
	return err
}

// presignTTL bounds presigned redirects from /d: the link's remaining life,
// at most 15 minutes, at least one minute.
func presignTTL(expires time.Time) time.Duration {
	d := time.Until(expires)
	return min(max(d, time.Minute), 15*time.Minute)
}
