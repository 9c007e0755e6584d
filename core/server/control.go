package server

import (
	"bytes"
	"context"
	"crypto/md5"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
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

	"github.com/mcpblob/mcpblob/core/blobs"
	"github.com/mcpblob/mcpblob/core/token"
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
	if why := s.checkHostOrigin(ctx); why != "" {
		apiError(ctx, http.StatusForbidden, "forbidden", why)
		return
	}
	principal, ok := s.authenticate(ctx)
	if !ok {
		ctx.Response.Header.Set("WWW-Authenticate", `Bearer realm="mcpblob"`)
		apiError(ctx, http.StatusUnauthorized, "unauthorized", "a valid bearer API key is required")
		return
	}
	raw := string(ctx.URI().PathOriginal())
	if i := strings.IndexByte(raw, '?'); i >= 0 {
		raw = raw[:i]
	}
	method := string(ctx.Method())
	switch {
	case raw == "/v1/blobs" || raw == "/v1/blobs/":
		if method != http.MethodGet && method != http.MethodHead {
			methodNotAllowed(ctx, "GET, HEAD")
			return
		}
		s.listBlobs(ctx)
	case strings.HasPrefix(raw, "/v1/blobs/"):
		key, err := url.PathUnescape(strings.TrimPrefix(raw, "/v1/blobs/"))
		if err == nil {
			err = storage.ValidateKey(key)
		}
		if err != nil {
			apiError(ctx, http.StatusBadRequest, "invalid_key", "invalid key: "+strings.TrimPrefix(err.Error(), "storage: invalid key "))
			return
		}
		switch method {
		case http.MethodPut:
			s.putBlob(ctx, key, principal)
		case http.MethodGet, http.MethodHead:
			s.serveBlob(ctx, blobServe{key: key})
		case http.MethodDelete:
			s.deleteBlob(ctx, key)
		default:
			methodNotAllowed(ctx, "GET, HEAD, PUT, DELETE")
		}
	case raw == "/v1/links":
		if method != http.MethodPost {
			methodNotAllowed(ctx, "POST")
			return
		}
		s.postLink(ctx, principal)
	case raw == "/v1/uploads":
		if method != http.MethodPost {
			methodNotAllowed(ctx, "POST")
			return
		}
		s.postUpload(ctx, principal)
	default:
		apiError(ctx, http.StatusNotFound, "not_found", "no such endpoint")
	}
}

// apiError writes {"error":{"code","message"}}.
func apiError(ctx *fasthttp.RequestCtx, status int, code, msg string) {
	b, _ := json.Marshal(map[string]any{"error": map[string]string{"code": code, "message": msg}})
	ctx.SetStatusCode(status)
	ctx.SetContentType("application/json")
	ctx.SetBody(b)
}

func methodNotAllowed(ctx *fasthttp.RequestCtx, allow string) {
	ctx.Response.Header.Set("Allow", allow)
	apiError(ctx, http.StatusMethodNotAllowed, "method_not_allowed", "method not allowed; use "+allow)
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
	var be *bodyError
	switch {
	case errors.Is(err, storage.ErrNotFound):
		apiError(ctx, http.StatusNotFound, "not_found", fmt.Sprintf("blob %q not found", key))
	case errors.Is(err, storage.ErrInvalidKey):
		apiError(ctx, http.StatusBadRequest, "invalid_key", fmt.Sprintf("invalid key %q", key))
	case errors.Is(err, storage.ErrExists):
		apiError(ctx, http.StatusPreconditionFailed, "exists", fmt.Sprintf("blob %q already exists", key))
	case errors.Is(err, storage.ErrTooLarge), errors.Is(err, ingest.ErrTooLarge):
		apiError(ctx, http.StatusRequestEntityTooLarge, "too_large", "body over the upload limit")
	case errors.Is(err, storage.ErrSizeMismatch):
		apiError(ctx, http.StatusBadRequest, "bad_request", "body length does not match Content-Length")
	case errors.Is(err, storage.ErrInvalidCursor):
		apiError(ctx, http.StatusBadRequest, "bad_request", "invalid cursor")
	case errors.Is(err, storage.ErrInvalidRange):
		apiError(ctx, http.StatusRequestedRangeNotSatisfiable, "range_not_satisfiable", "range not satisfiable")
	case errors.Is(err, storage.ErrInsufficientStorage):
		s.log.Error("server: storage full", "op", op, "key", key, "err", err)
		apiError(ctx, http.StatusInsufficientStorage, "insufficient_storage", msgNoSpace)
	case errors.As(err, &be) && isTimeout(err):
		s.log.Debug("server: request body too slow", "op", op, "key", key, "err", err)
		apiError(ctx, http.StatusRequestTimeout, "timeout", msgTooSlow)
	case errors.As(err, &be):
		// The client went away; nobody may read the answer.
		s.log.Debug("server: request body", "op", op, "key", key, "err", err)
		apiError(ctx, http.StatusBadRequest, "bad_request", "reading the body failed")
	default:
		s.log.Error("server: storage", "op", op, "key", key, "err", err)
		apiError(ctx, http.StatusInternalServerError, "internal", "internal error")
	}
}

// blobJSON is the blob object of docs/control-api.md.
type blobJSON struct {
	URI      string `json:"uri"`
	Key      string `json:"key"`
	Size     int64  `json:"size"`
	SHA256   string `json:"sha256"`
	MimeType string `json:"mimeType"`
	Filename string `json:"filename,omitempty"`
	ETag     string `json:"etag"`
	Modified string `json:"modified"`
}

func blobObject(info storage.Info) blobJSON {
	b := blobJSON{URI: blobs.URI(info.Key), Key: info.Key, Size: info.Size, SHA256: info.SHA256,
		MimeType: mediaTypeOf(info), Filename: info.Filename, ETag: info.ETag}
	if !info.ModTime.IsZero() {
		b.Modified = info.ModTime.UTC().Format(time.RFC3339)
	}
	return b
}

func writeJSON(ctx *fasthttp.RequestCtx, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		panic("bug: control API response does not marshal: " + err.Error())
	}
	ctx.SetStatusCode(status)
	ctx.SetContentType("application/json")
	ctx.SetBody(b)
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
func (s *Server) putBlob(ctx *fasthttp.RequestCtx, key, principal string) {
	spec, want, ok := s.putSpec(ctx, key)
	if !ok {
		return
	}
	hdr := &ctx.Request.Header
	cl := int64(hdr.ContentLength()) // -1 chunked
	if cl > spec.MaxSize {
		s.refuseBody(ctx, http.StatusRequestEntityTooLarge, "too_large",
			fmt.Sprintf("body of %d bytes is over the upload limit of %d bytes", cl, spec.MaxSize))
		return
	}
	if cl > 0 {
		spec.Size = cl
	}
	release, ok := s.admitUpload(ctx, principal, false)
	if !ok {
		return
	}
	defer release()
	wctx := context.Background()
	if spec.IfNotExists {
		if _, err := s.opts.Backend.Stat(wctx, key); err == nil {
			s.refuseBody(ctx, http.StatusPreconditionFailed, "exists", fmt.Sprintf("blob %q already exists", key))
			return
		}
	}
	up, err := ingest.Begin(wctx, s.opts.Backend, spec)
	if err != nil {
		s.drainSmall(ctx)
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
	s.blobs.Changed(key)
	writeJSON(ctx, http.StatusCreated, blobObject(info))
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
		if _, _, err := mime.ParseMediaType(spec.MediaType); err != nil {
			s.refuseBody(ctx, http.StatusBadRequest, "bad_request", "bad Content-Type")
			return spec, want, false
		}
	}
	if cd := string(hdr.Peek("Content-Disposition")); cd != "" {
		_, params, err := mime.ParseMediaType(cd)
		if err != nil {
			s.refuseBody(ctx, http.StatusBadRequest, "bad_request", "bad Content-Disposition")
			return spec, want, false
		}
		spec.Filename = params["filename"]
	}
	if want, ok = s.putWantDigests(ctx); !ok {
		return spec, want, false
	}
	if v := strings.TrimSpace(string(hdr.Peek("If-None-Match"))); v != "" {
		if v != "*" {
			s.refuseBody(ctx, http.StatusBadRequest, "bad_request", `only "If-None-Match: *" is supported on PUT`)
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
			s.refuseBody(ctx, http.StatusBadRequest, "bad_request", "Content-MD5 must be the base64 MD5 of the body")
			return want, false
		}
		want.md5 = b
	}
	if v := string(hdr.Peek("x-mcp-sha256")); v != "" {
		b, err := hex.DecodeString(strings.TrimSpace(v))
		if err != nil || len(b) != sha256.Size {
			s.refuseBody(ctx, http.StatusBadRequest, "bad_request", "x-mcp-sha256 must be the hex SHA-256 of the body")
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
	var body io.Reader = bodyReader{s.paced(ctx)}
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
		// The body was not read to its end.
		ctx.SetConnectionClose()
		s.apiStorageError(ctx, "write", key, err)
		return false
	}
	if err := up.Close(); err != nil {
		s.apiStorageError(ctx, "write", key, err)
		return false
	}
	if (sh != nil && !bytes.Equal(sh.Sum(nil), want.sha256)) || (mh != nil && !bytes.Equal(mh.Sum(nil), want.md5)) {
		apiError(ctx, http.StatusBadRequest, "checksum_mismatch", "the body does not match its Content-MD5 or x-mcp-sha256; nothing was stored")
		return false
	}
	return true
}

// bodyError is a failure reading a request body: the client went away,
// stalled or sent a malformed body.
type bodyError struct{ err error }

func (e *bodyError) Error() string { return "server: request body: " + e.err.Error() }
func (e *bodyError) Unwrap() error { return e.err }

// bodyReader marks the errors of a request body as *bodyError, so they are
// told apart from storage's when both meet in one io.Copy. io.EOF passes
// as is (the io.Reader contract).
type bodyReader struct{ r io.Reader }

func (b bodyReader) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if err != nil && err != io.EOF {
		err = &bodyError{err}
	}
	return n, err
}

// requestBody returns the request body stream (bodies stream: the server
// runs with StreamRequestBody).
func (s *Server) requestBody(ctx *fasthttp.RequestCtx) io.Reader {
	if bs := ctx.RequestBodyStream(); bs != nil {
		return bs
	}
	return bytes.NewReader(ctx.Request.Body())
}

// refuseBody answers before reading a request body: a small body (up to
// drainLimit) is read, under the rate rule, and discarded so the client
// sees the answer on a kept-alive connection; a large one closes the
// connection after the answer.
func (s *Server) refuseBody(ctx *fasthttp.RequestCtx, status int, code, msg string) {
	s.drainSmall(ctx)
	apiError(ctx, status, code, msg)
}

func (s *Server) drainSmall(ctx *fasthttp.RequestCtx) {
	cl := ctx.Request.Header.ContentLength()
	if cl == 0 {
		return
	}
	if cl > 0 && cl <= drainLimit {
		if _, err := io.CopyN(io.Discard, s.paced(ctx), int64(cl)); err == nil {
			return
		}
	}
	ctx.SetConnectionClose()
}

func (s *Server) deleteBlob(ctx *fasthttp.RequestCtx, key string) {
	if err := s.opts.Backend.Delete(context.Background(), key); err != nil {
		s.apiStorageError(ctx, "delete", key, err)
		return
	}
	s.blobs.Changed(key)
	ctx.SetStatusCode(http.StatusNoContent)
}

func (s *Server) listBlobs(ctx *fasthttp.RequestCtx) {
	args := ctx.QueryArgs()
	limit := 0
	if v := args.Peek("limit"); len(v) > 0 {
		n, err := strconv.Atoi(string(v))
		if err != nil || n < 1 || n > 1000 {
			apiError(ctx, http.StatusBadRequest, "bad_request", "limit must be an integer in [1, 1000]")
			return
		}
		limit = n
	}
	page, err := s.opts.Backend.List(context.Background(), string(args.Peek("prefix")), string(args.Peek("cursor")), limit)
	if err != nil {
		s.apiStorageError(ctx, "list", string(args.Peek("prefix")), err)
		return
	}
	items := make([]blobJSON, 0, len(page.Items))
	for _, it := range page.Items {
		items = append(items, blobObject(it))
	}
	writeJSON(ctx, http.StatusOK, struct {
		Items      []blobJSON `json:"items"`
		NextCursor string     `json:"nextCursor,omitempty"`
	}{items, page.NextCursor})
}

// readJSON decodes a small JSON request body into v; false means an error
// response was written.
func (s *Server) readJSON(ctx *fasthttp.RequestCtx, v any) bool {
	if cl := ctx.Request.Header.ContentLength(); cl > maxControlJSON {
		s.refuseBody(ctx, http.StatusRequestEntityTooLarge, "too_large", "JSON body too large")
		return false
	}
	b, err := io.ReadAll(io.LimitReader(s.paced(ctx), maxControlJSON+1))
	if err != nil {
		apiError(ctx, http.StatusBadRequest, "bad_request", "reading the body failed")
		return false
	}
	if len(b) > maxControlJSON {
		ctx.SetConnectionClose()
		apiError(ctx, http.StatusRequestEntityTooLarge, "too_large", "JSON body too large")
		return false
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		apiError(ctx, http.StatusBadRequest, "bad_request", "malformed JSON: "+err.Error())
		return false
	}
	return true
}

func ttlOf(seconds int64, def time.Duration) (time.Duration, bool) {
	if seconds == 0 {
		return def, true
	}
	d := time.Duration(seconds) * time.Second
	return d, seconds > 0 && d <= maxLinkTTL
}

func (s *Server) postLink(ctx *fasthttp.RequestCtx, principal string) {
	var req struct {
		Key        string `json:"key"`
		TTLSeconds int64  `json:"ttlSeconds"`
		Filename   string `json:"filename"`
		SingleUse  bool   `json:"singleUse"`
	}
	if !s.readJSON(ctx, &req) {
		return
	}
	if req.Key == "" {
		apiError(ctx, http.StatusBadRequest, "bad_request", "key is required")
		return
	}
	if err := storage.ValidateKey(req.Key); err != nil {
		apiError(ctx, http.StatusBadRequest, "invalid_key", err.Error())
		return
	}
	ttl, ok := ttlOf(req.TTLSeconds, token.DefaultDownloadTTL)
	if !ok {
		apiError(ctx, http.StatusBadRequest, "bad_request", fmt.Sprintf("ttlSeconds must be in [1, %d]", int64(maxLinkTTL/time.Second)))
		return
	}
	if req.SingleUse && ttl > token.MaxSingleUseTTL {
		apiError(ctx, http.StatusBadRequest, "bad_request", fmt.Sprintf("a single-use link lives at most %d seconds (ttlSeconds)", int64(token.MaxSingleUseTTL/time.Second)))
		return
	}
	if strings.ContainsFunc(req.Filename, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		apiError(ctx, http.StatusBadRequest, "bad_request", "filename has control characters")
		return
	}
	if _, err := s.opts.Backend.Stat(context.Background(), req.Key); err != nil {
		s.apiStorageError(ctx, "stat", req.Key, err)
		return
	}
	link, err := s.opts.Keyring.MintDownload(s.opts.PublicURL, token.DownloadGrant{
		Principal: principal, Key: req.Key, Filename: req.Filename, SingleUse: req.SingleUse, TTL: ttl})
	if err != nil {
		s.apiStorageError(ctx, "mint", req.Key, err)
		return
	}
	writeJSON(ctx, http.StatusCreated, map[string]string{"url": link.URL, "expiresAt": link.Expires.UTC().Format(time.RFC3339)})
}

func (s *Server) postUpload(ctx *fasthttp.RequestCtx, principal string) {
	var req struct {
		Key        string   `json:"key"`
		MaxSize    int64    `json:"maxSize"`
		Accept     []string `json:"accept"`
		TTLSeconds int64    `json:"ttlSeconds"`
	}
	if !s.readJSON(ctx, &req) {
		return
	}
	if req.Key != "" {
		if err := storage.ValidateKey(req.Key); err != nil {
			apiError(ctx, http.StatusBadRequest, "invalid_key", err.Error())
			return
		}
	}
	switch {
	case req.MaxSize == 0:
		req.MaxSize = s.maxUpload()
	case req.MaxSize < 0 || req.MaxSize > s.maxUpload():
		apiError(ctx, http.StatusBadRequest, "bad_request", fmt.Sprintf("maxSize must be in [1, %d]", s.maxUpload()))
		return
	}
	for _, a := range req.Accept {
		if !validMediaRange(a) {
			apiError(ctx, http.StatusBadRequest, "bad_request", fmt.Sprintf("accept entry %q is not a media type or range", a))
			return
		}
	}
	ttl, ok := ttlOf(req.TTLSeconds, token.DefaultUploadTTL)
	if !ok {
		apiError(ctx, http.StatusBadRequest, "bad_request", fmt.Sprintf("ttlSeconds must be in [1, %d]", int64(maxLinkTTL/time.Second)))
		return
	}
	up, err := s.mintUpload(token.Upload{Principal: principal, Key: req.Key, MaxSize: req.MaxSize, Accept: req.Accept, TTL: ttl})
	if err != nil {
		s.apiStorageError(ctx, "mint", req.Key, err)
		return
	}
	writeJSON(ctx, http.StatusCreated, map[string]string{"url": up.URL, "method": up.Method, "uploadId": up.UploadID,
		"expiresAt": up.Expires.UTC().Format(time.RFC3339)})
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
