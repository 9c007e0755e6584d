package blobsvc

import (
	"bytes"
	"context"
	"crypto/md5"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/mcpblob/mcpblob/core/auth"
	"github.com/mcpblob/mcpblob/core/blobs"
	"github.com/mcpblob/mcpblob/core/server/blobsvc/resumable"
	"github.com/mcpblob/mcpblob/core/server/gate"
	"github.com/mcpblob/mcpblob/core/server/pace"
	"github.com/mcpblob/mcpblob/storage"
	"github.com/mcpblob/mcpblob/storage/ingest"
)

// The control API (/v1), as docs/control-api.md describes it: blobs
// (streaming PUT, GET/HEAD with ranges, DELETE, list), download links and
// upload endpoints. Authentication is the /mcp API-key scheme; errors are
// {"error":{"code","message"}} with the codes of apiStorageError.

// maxControlJSON bounds the JSON body of POST /v1/links and /v1/uploads.
const maxControlJSON = 64 << 10

// maxLinkTTL bounds ttlSeconds of links and upload endpoints.
const maxLinkTTL = 7 * 24 * time.Hour

func (s *Server) serveControl(ctx *fasthttp.RequestCtx) {
	if ep, ok := s.controlRoute(ctx); ok {
		ep.run()
	}
}

// controlEndpoint is a /v1 request routed before any byte of its body is
// read: run serves it; admit, when set, makes the checks run makes of the
// headers before it reads the body (declared size, Content-Disposition…),
// answering a refusal itself, for Expect: 100-continue (Server.Admit).
type controlEndpoint struct {
	run   func()
	admit func() bool
	scope string // what the caller's credential must grant
}

// controlRoute checks Host and Origin, authenticates and routes a /v1
// request (path, method, key); on refusal it answers and reports !ok.
func (s *Server) controlRoute(ctx *fasthttp.RequestCtx) (controlEndpoint, bool) {
	if why := s.gate.CheckHostOrigin(ctx); why != "" {
		gate.APIError(ctx, http.StatusForbidden, "forbidden", why)
		return controlEndpoint{}, false
	}
	id, refused := s.gate.Identify(ctx)
	if refused != nil {
		s.gate.Refuse(ctx, refused)
		return controlEndpoint{}, false
	}
	ep, ok := s.routeControl(ctx, id)
	if !ok {
		return controlEndpoint{}, false
	}
	if refused = s.gate.RequireScope(id, ep.scope); refused != nil {
		s.gate.Refuse(ctx, refused)
		return controlEndpoint{}, false
	}
	return ep, true
}

// routeControl routes a /v1 request of id by path and method; on refusal
// it answers and reports !ok.
func (s *Server) routeControl(ctx *fasthttp.RequestCtx, id auth.Identity) (controlEndpoint, bool) {
	raw := string(ctx.URI().PathOriginal())
	if i := strings.IndexByte(raw, '?'); i >= 0 {
		raw = raw[:i]
	}
	method := string(ctx.Method())
	allow := ""
	switch {
	case raw == "/v1/blobs" || raw == "/v1/blobs/":
		if method == http.MethodGet || method == http.MethodHead {
			return controlEndpoint{run: func() { s.listBlobs(ctx, id) }, scope: auth.ScopeRead}, true
		}
		allow = "GET, HEAD"
	case strings.HasPrefix(raw, "/v1/blobs/"):
		return s.blobRoute(ctx, raw, method, id)
	case raw == "/v1/links" && method == http.MethodPost:
		return controlEndpoint{run: func() { s.postLink(ctx, id) }, admit: func() bool { return s.admitJSON(ctx) },
			scope: auth.ScopeRead}, true
	case raw == "/v1/uploads" && method == http.MethodPost:
		return controlEndpoint{run: func() { s.postUpload(ctx, id) }, admit: func() bool { return s.admitJSON(ctx) },
			scope: auth.ScopeWrite}, true
	case raw == "/v1/links" || raw == "/v1/uploads":
		allow = "POST"
	case raw == "/v1/tus" || strings.HasPrefix(raw, resumable.Base):
		return s.tusRoute(ctx, raw, method, id) // tus.go
	default:
		gate.APIError(ctx, http.StatusNotFound, "not_found", "no such endpoint")
		return controlEndpoint{}, false
	}
	gate.MethodNotAllowed(ctx, allow)
	return controlEndpoint{}, false
}

// blobRoute routes /v1/blobs/{key}.
func (s *Server) blobRoute(ctx *fasthttp.RequestCtx, raw, method string, id auth.Identity) (controlEndpoint, bool) {
	key, err := url.PathUnescape(strings.TrimPrefix(raw, "/v1/blobs/"))
	if err != nil {
		gate.APIError(ctx, http.StatusBadRequest, "invalid_key", "invalid key: the path has a malformed percent-escape")
		return controlEndpoint{}, false
	}
	if !keyField(ctx, key) {
		return controlEndpoint{}, false
	}
	switch method {
	case http.MethodPut:
		return controlEndpoint{run: func() { s.putBlob(ctx, key, id) }, admit: func() bool {
			_, _, ok := s.admitPut(ctx, key)
			return ok
		}, scope: auth.ScopeWrite}, true
	case http.MethodGet, http.MethodHead:
		return controlEndpoint{run: func() { s.serveBlob(ctx, blobServe{key: key, store: s.storeFor(id)}) },
			scope: auth.ScopeRead}, true
	case http.MethodDelete:
		return controlEndpoint{run: func() { s.deleteBlob(ctx, key, id) }, scope: auth.ScopeWrite}, true
	}
	gate.MethodNotAllowed(ctx, "GET, HEAD, PUT, DELETE")
	return controlEndpoint{}, false
}

// msgNoSpace is the answer to an upload the store has no room for.
const msgNoSpace = "the server is out of storage space; nothing was stored"

// msgTooSlow is the answer to an upload cut off by the rate rule.
const msgTooSlow = "the body arrived slower than the minimum rate or stalled; nothing was stored"

// isTimeout reports a read deadline that passed.
func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// apiStorageError is the one place storage and ingest errors, and those of
// a request body being stored, become HTTP statuses for the control API and
// the byte plane. Internal detail goes to the log.
func (s *Server) apiStorageError(ctx *fasthttp.RequestCtx, op, key string, err error) {
	var be *pace.BodyError
	switch {
	case gate.RefuseQuota(ctx, err): // 403 quota_exceeded
	case errors.Is(err, storage.ErrNotFound):
		gate.APIError(ctx, http.StatusNotFound, "not_found", fmt.Sprintf("blob %q not found", key))
	case errors.Is(err, storage.ErrInvalidKey):
		gate.APIError(ctx, http.StatusBadRequest, "invalid_key", invalidKeyMessage(key, err))
	case errors.Is(err, storage.ErrPathConflict):
		gate.APIError(ctx, http.StatusConflict, "path_conflict", conflictMessage(err))
	case errors.Is(err, storage.ErrInvalidMediaType):
		gate.APIError(ctx, http.StatusBadRequest, "bad_content_type", fmt.Sprintf("Content-Type must be at most %d bytes without control characters", storage.MaxMediaTypeLen))
	case errors.Is(err, storage.ErrInvalidFilename):
		gate.APIError(ctx, http.StatusBadRequest, "invalid_filename", filenameMessage(err))
	case errors.Is(err, storage.ErrExists):
		gate.APIError(ctx, http.StatusPreconditionFailed, "exists", fmt.Sprintf("blob %q already exists", key))
	case errors.Is(err, storage.ErrTooLarge), errors.Is(err, ingest.ErrTooLarge):
		gate.APIError(ctx, http.StatusRequestEntityTooLarge, "too_large", "body over the upload limit")
	case errors.Is(err, storage.ErrSizeMismatch):
		gate.APIError(ctx, http.StatusBadRequest, "bad_request", "body length does not match Content-Length")
	case errors.Is(err, storage.ErrInvalidCursor):
		gate.APIError(ctx, http.StatusBadRequest, "bad_request", "invalid cursor")
	case errors.Is(err, storage.ErrInvalidRange):
		gate.APIError(ctx, http.StatusRequestedRangeNotSatisfiable, "range_not_satisfiable", "range not satisfiable")
	case errors.Is(err, storage.ErrInsufficientStorage):
		s.log.Error("server: storage full", "op", op, "key", key, "err", err)
		gate.APIError(ctx, http.StatusInsufficientStorage, "insufficient_storage", msgNoSpace)
	case errors.As(err, &be) && isTimeout(err):
		s.log.Debug("server: request body too slow", "op", op, "key", key, "err", err)
		gate.APIError(ctx, http.StatusRequestTimeout, "timeout", msgTooSlow)
	case errors.As(err, &be):
		// The client went away; nobody may read the answer.
		s.log.Debug("server: request body", "op", op, "key", key, "err", err)
		gate.APIError(ctx, http.StatusBadRequest, "bad_request", "reading the body failed")
	default:
		s.log.Error("server: storage", "op", op, "key", key, "err", err)
		gate.APIError(ctx, http.StatusInternalServerError, "internal", "internal error")
	}
}

// invalidKeyMessage says why the store refused key: the reason of its
// *storage.KeyError, never the error's text, which may carry a storage
// path or a syscall error.
func invalidKeyMessage(key string, err error) string {
	if why := storage.KeyReason(err); why != "" {
		return fmt.Sprintf("invalid key %q: %s", storage.TruncateKey(key), why)
	}
	return fmt.Sprintf("invalid key %q", storage.TruncateKey(key))
}

// conflictMessage says what stands in the way of a key (a blob that is one
// of its parents, or blobs under it).
func conflictMessage(err error) string {
	var pe *storage.PathConflictError
	switch {
	case !errors.As(err, &pe):
		return "the key conflicts with the path of another blob"
	case strings.HasSuffix(pe.Conflict, "/"):
		return fmt.Sprintf("key %q conflicts with the blobs under %q: a key cannot be both a blob and a folder of blobs",
			storage.TruncateKey(pe.Key), storage.TruncateKey(pe.Conflict))
	}
	return fmt.Sprintf("key %q conflicts with the blob %q, one of its parents: a key cannot be both a blob and a folder of blobs",
		storage.TruncateKey(pe.Key), storage.TruncateKey(pe.Conflict))
}

// filenameMessage says why a filename is refused.
func filenameMessage(err error) string {
	var fe *storage.FilenameError
	if errors.As(err, &fe) {
		return "filename " + fe.Reason
	}
	return "invalid filename"
}

// Blob is the blob object of docs/control-api.md.
type Blob struct {
	URI      string `json:"uri"`
	Key      string `json:"key"`
	Size     int64  `json:"size"`
	SHA256   string `json:"sha256"`
	MimeType string `json:"mimeType"`
	Filename string `json:"filename,omitempty"`
	ETag     string `json:"etag"`
	Modified string `json:"modified"`
	Expires  string `json:"expires,omitempty"` // RFC 3339; a listing's: the effective expiry (a rule's when earlier)
}

func blobObject(info storage.Info) Blob {
	b := Blob{URI: blobs.URI(info.Key), Key: info.Key, Size: info.Size, SHA256: info.SHA256,
		MimeType: mediaTypeOf(info), Filename: info.Filename, ETag: info.ETag, Expires: gate.ExpiresField(info.Expires)}
	if !info.ModTime.IsZero() {
		b.Modified = info.ModTime.UTC().Format(time.RFC3339)
	}
	return b
}

func (s *Server) maxUpload() int64 {
	if s.opts.MaxUploadBytes > 0 {
		return s.opts.MaxUploadBytes
	}
	return DefaultMaxUploadBytes
}

// putBlob streams the request body into storage. Nothing is visible until
// the whole body arrived, its length matched and the optional digests
// checked out; any failure aborts the write.
func (s *Server) putBlob(ctx *fasthttp.RequestCtx, key string, id auth.Identity) {
	spec, want, ok := s.admitPut(ctx, key)
	if !ok {
		return
	}
	release, refused := s.gate.TakeUploadSlot(id.Principal)
	if refused != nil {
		s.gate.Refuse(ctx, refused)
		return
	}
	defer release()
	wctx, store := context.Background(), s.storeFor(id)
	if spec.IfNotExists {
		if _, err := store.Stat(wctx, key); err == nil {
			s.gate.RefuseBody(ctx, http.StatusPreconditionFailed, "exists", fmt.Sprintf("blob %q already exists", key))
			return
		}
	}
	up, err := ingest.Begin(wctx, store, spec)
	if err != nil {
		s.gate.DrainSmall(ctx)
		s.apiStorageError(ctx, "create", key, err)
		return
	}
	defer up.Abort() // no-op after Commit
	if !s.writePutBody(ctx, key, up, want) {
		return
	}
	info, err := up.Commit(wctx)
	if err != nil {
		s.apiStorageError(ctx, "commit", key, err)
		return
	}
	s.blobs.Changed(s.gate.Tenancy.Raw(id, key))
	gate.WriteJSON(ctx, http.StatusCreated, blobObject(info))
}

// admitPut checks a PUT's headers and declared size before any body byte:
// the ingest spec and the digests the body must have, or a refusal
// answered (!ok).
func (s *Server) admitPut(ctx *fasthttp.RequestCtx, key string) (spec ingest.Spec, want putDigests, ok bool) {
	if spec, want, ok = s.putSpec(ctx, key); !ok {
		return spec, want, false
	}
	cl := int64(ctx.Request.Header.ContentLength()) // -1 chunked
	if cl > spec.MaxSize {
		s.gate.RefuseBody(ctx, http.StatusRequestEntityTooLarge, "too_large",
			fmt.Sprintf("body of %d bytes is over the upload limit of %d bytes", cl, spec.MaxSize))
		return spec, want, false
	}
	if cl > 0 {
		spec.Size = cl
	}
	return spec, want, true
}

// putDigests are the digests a PUT's body must have, nil when not given.
type putDigests struct{ md5, sha256 []byte }

// putSpec reads the ingest spec and the expected digests of a PUT from its
// headers. On a bad header it refuses the request and reports !ok.
func (s *Server) putSpec(ctx *fasthttp.RequestCtx, key string) (spec ingest.Spec, want putDigests, ok bool) {
	hdr := &ctx.Request.Header
	// The control API stores what a server sends as sent: empty bodies are
	// blobs too, and the declared type is not second-guessed.
	spec = ingest.Spec{Key: key, MediaType: string(hdr.ContentType()), MaxSize: s.maxUpload(), AllowEmpty: true, NoSniff: true}
	if spec.MediaType != "" {
		if _, _, err := mime.ParseMediaType(spec.MediaType); err != nil || len(spec.MediaType) > storage.MaxMediaTypeLen {
			s.gate.RefuseBody(ctx, http.StatusBadRequest, "bad_request", fmt.Sprintf("bad Content-Type: malformed, or over %d bytes", storage.MaxMediaTypeLen))
			return spec, want, false
		}
	}
	if cd := string(hdr.Peek("Content-Disposition")); cd != "" {
		_, params, err := mime.ParseMediaType(cd)
		if err != nil {
			s.gate.RefuseBody(ctx, http.StatusBadRequest, "bad_request", "bad Content-Disposition")
			return spec, want, false
		}
		spec.Filename = params["filename"]
		if err := storage.ValidateFilename(spec.Filename); err != nil {
			s.gate.RefuseBody(ctx, http.StatusBadRequest, "invalid_filename", filenameMessage(err))
			return spec, want, false
		}
	}
	if want, ok = s.putWantDigests(ctx); ok {
		spec.Expires, ok = s.gate.PutExpiry(ctx, time.Now())
	}
	if !ok {
		return spec, want, false
	}
	if v := strings.TrimSpace(string(hdr.Peek("If-None-Match"))); v != "" {
		if v != "*" {
			s.gate.RefuseBody(ctx, http.StatusBadRequest, "bad_request", `only "If-None-Match: *" is supported on PUT`)
			return spec, want, false
		}
		spec.IfNotExists = true
	}
	return spec, want, true
}

// putWantDigests reads Content-MD5 and x-mcp-sha256. On a malformed one it
// refuses the request and reports !ok.
func (s *Server) putWantDigests(ctx *fasthttp.RequestCtx) (want putDigests, ok bool) {
	hdr := &ctx.Request.Header
	if v := string(hdr.Peek("Content-MD5")); v != "" {
		b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(v))
		if err != nil || len(b) != md5.Size {
			s.gate.RefuseBody(ctx, http.StatusBadRequest, "bad_request", "Content-MD5 must be the base64 MD5 of the body")
			return want, false
		}
		want.md5 = b
	}
	if v := string(hdr.Peek("x-mcp-sha256")); v != "" {
		b, err := hex.DecodeString(strings.TrimSpace(v))
		if err != nil || len(b) != sha256.Size {
			s.gate.RefuseBody(ctx, http.StatusBadRequest, "bad_request", "x-mcp-sha256 must be the hex SHA-256 of the body")
			return want, false
		}
		want.sha256 = b
	}
	return want, true
}

// writePutBody copies the request body into up, closes it and checks the
// wanted digests. On failure it answers the error and reports false; the
// caller's deferred Abort discards the write.
func (s *Server) writePutBody(ctx *fasthttp.RequestCtx, key string, up *ingest.Upload, want putDigests) bool {
	paced := s.gate.Paced(ctx)
	var body io.Reader = paced
	var sh, mh hash.Hash
	var hashes []io.Writer
	if want.sha256 != nil {
		sh = sha256.New()
		hashes = append(hashes, sh)
	}
	if want.md5 != nil {
		mh = md5.New()
		hashes = append(hashes, mh)
	}
	if len(hashes) > 0 {
		body = io.TeeReader(body, io.MultiWriter(hashes...))
	}
	if _, err := io.Copy(up, body); err != nil {
		var be *pace.BodyError
		if errors.As(err, &be) {
			ctx.SetConnectionClose() // the client's side failed: nothing to wait for
		} else {
			// The store failed (disk full): read a bounded rest under the
			// same rate rule, so the client reads the answer instead of a reset.
			finishBody(ctx, paced)
		}
		s.apiStorageError(ctx, "write", key, err)
		return false
	}
	if err := up.Close(); err != nil {
		s.apiStorageError(ctx, "write", key, err)
		return false
	}
	if (sh != nil && !bytes.Equal(sh.Sum(nil), want.sha256)) || (mh != nil && !bytes.Equal(mh.Sum(nil), want.md5)) {
		gate.APIError(ctx, http.StatusBadRequest, "checksum_mismatch", "the body does not match its Content-MD5 or x-mcp-sha256; nothing was stored")
		return false
	}
	return true
}

func (s *Server) deleteBlob(ctx *fasthttp.RequestCtx, key string, id auth.Identity) {
	if err := s.storeFor(id).Delete(context.Background(), key); err != nil {
		s.apiStorageError(ctx, "delete", key, err)
		return
	}
	s.blobs.Changed(s.gate.Tenancy.Raw(id, key))
	ctx.SetStatusCode(http.StatusNoContent)
}

func (s *Server) listBlobs(ctx *fasthttp.RequestCtx, id auth.Identity) {
	args := ctx.QueryArgs()
	limit := 0
	if v := args.Peek("limit"); len(v) > 0 {
		n, err := strconv.Atoi(string(v))
		if err != nil || n < 1 || n > 1000 {
			gate.APIError(ctx, http.StatusBadRequest, "bad_request", "limit must be an integer in [1, 1000]")
			return
		}
		limit = n
	}
	page, err := s.storeFor(id).List(context.Background(), string(args.Peek("prefix")), string(args.Peek("cursor")), limit)
	if err != nil {
		s.apiStorageError(ctx, "list", string(args.Peek("prefix")), err)
		return
	}
	items := make([]Blob, 0, len(page.Items))
	for _, it := range page.Items {
		items = append(items, blobObject(it))
	}
	gate.WriteJSON(ctx, http.StatusOK, struct {
		Items      []Blob `json:"items"`
		NextCursor string `json:"nextCursor,omitempty"`
	}{items, page.NextCursor})
}

// validMediaRange accepts "type/subtype", "type/*" and "*/*" (parameters
// allowed), and file extensions such as ".pdf".
func validMediaRange(v string) bool {
	if strings.HasPrefix(v, ".") && len(v) > 1 && !strings.ContainsAny(v, "/ \t;") {
		return true
	}
	mt, _, err := mime.ParseMediaType(v)
	if err != nil {
		return false
	}
	t, sub, ok := strings.Cut(mt, "/")
	return ok && t != "" && sub != "" && (t != "*" || sub == "*")
}
