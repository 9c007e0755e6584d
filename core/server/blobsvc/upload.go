package blobsvc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"strings"

	"github.com/valyala/fasthttp"

	"github.com/mcpblob/mcpblob/core/blobs"
	"github.com/mcpblob/mcpblob/core/budget"
	"github.com/mcpblob/mcpblob/core/server/gate"
	"github.com/mcpblob/mcpblob/core/server/lazybody"
	"github.com/mcpblob/mcpblob/core/server/onetime"
	"github.com/mcpblob/mcpblob/core/server/pace"
	"github.com/mcpblob/mcpblob/core/token"
	"github.com/mcpblob/mcpblob/storage"
	"github.com/mcpblob/mcpblob/storage/ingest"
)

// Upload endpoints (docs/uploads.md): POST /u/{token} with a
// multipart/form-data body (one or, when the token allows it, several parts
// named "file"; filename from Content-Disposition, type from the part's
// Content-Type), or PUT /u/{token} with a raw body (Content-Type, optional
// Content-Disposition filename). The body is read as a stream — the
// multipart reader runs over the request body stream, nothing is
// pre-parsed — and goes through storage/ingest straight to storage, with
// the token's maxSize enforced as bytes arrive, the part's declared and
// sniffed (magic bytes) types checked against the token's accept list and
// each other before anything is committed. Nothing is visible until the
// whole body arrived: a truncated upload stores nothing.
//
// Tokens are core/token PurposeUpload tokens (see mintUpload and core/mcp's
// request_upload). A token is refused when forged or expired; its reuse is
// refused without shared state: the stored key derives from the token (the
// uploadId is unique) and objects are created with IfNotExists, so a second
// upload hits storage.ErrExists (409). When the request carries an
// Authorization header, or the token was minted for binary-mode elicitation
// on a server with API keys, the caller must be the token's principal.

// uploadProgressEvery is how often (in bytes) upload progress is reported.
const uploadProgressEvery = 1 << 20

func (s *Server) serveUpload(ctx *fasthttp.RequestCtx) {
	claims, data, maxSize, ok := s.checkUpload(ctx, true)
	if !ok {
		return
	}
	// The slot first: it has no side effect, while the reservation takes
	// the upload link for good.
	release, refused := s.gate.TakeUploadSlot(claims.Principal)
	if refused != nil {
		s.gate.Refuse(ctx, refused)
		return
	}
	defer release()
	if !s.reserveUpload(ctx, claims) {
		return
	}
	up := &upload{srv: s, ctx: ctx, claims: claims, data: data, max: maxSize, body: s.gate.Paced(ctx)}
	if cl := ctx.Request.Header.ContentLength(); cl > 0 {
		up.total = int64(cl)
	} else {
		up.total = -1
	}
	var infos []storage.Info
	var uerr *uploadError
	if string(ctx.Method()) == http.MethodPut {
		infos, uerr = up.put()
	} else {
		infos, uerr = up.multipart()
	}
	if uerr == nil && data.File != "" { // SEP-2631: a file's bytes against its pins, refused bytes deleted
		if st, code, msg, err := s.blobs.CheckFileUpload(context.Background(), claims.Principal, data.File, infos); err != nil {
			uerr = &uploadError{st, code, msg, err}
		}
	}
	if uerr != nil {
		s.facts.Release(onetime.Uploads, claims.Nonce, claims.Expires) // nothing was stored: the link may be retried
		s.failUpload(ctx, claims.Nonce, uerr, up.body)
		return
	}
	s.completeUpload(ctx, up, infos)
}

// checkUpload makes an upload request's checks that come before its body:
// Host and Origin, method, token and principal, declared size. It returns
// the token's claims and data and the upload's size limit; on refusal it
// answers and reports !ok. bodySent says whether the client is already
// sending the body (not waiting for 100 Continue), which a refused method
// then reads when small.
func (s *Server) checkUpload(ctx *fasthttp.RequestCtx, bodySent bool) (claims token.Claims, data blobs.UploadTokenData, maxSize int64, ok bool) {
	if why := s.gate.CheckHostOrigin(ctx); why != "" {
		s.gate.RefuseBody(ctx, http.StatusForbidden, "forbidden", why)
		return claims, data, 0, false
	}
	if m := string(ctx.Method()); m != http.MethodPost && m != http.MethodPut {
		if bodySent {
			s.gate.DrainSmall(ctx)
		}
		gate.MethodNotAllowed(ctx, "POST, PUT")
		return claims, data, 0, false
	}
	ctx.Response.Header.Set("Cache-Control", "no-store")
	if claims, data, ok = s.uploadClaims(ctx, strings.TrimPrefix(string(ctx.Path()), "/u/")); !ok {
		return claims, data, 0, false
	}
	maxSize = claims.MaxSize
	if maxSize <= 0 || maxSize > s.maxUpload() {
		maxSize = s.maxUpload()
	}
	if cl := ctx.Request.Header.ContentLength(); cl > 0 && int64(cl) > maxSize+64<<10 {
		s.gate.RefuseBody(ctx, http.StatusRequestEntityTooLarge, "too_large", fmt.Sprintf("the file is larger than the limit of %d bytes", maxSize))
		return claims, data, 0, false
	}
	return claims, data, maxSize, true
}

// uploadClaims verifies the upload token tok and checks the caller against
// its principal when required. On refusal it answers and reports !ok.
func (s *Server) uploadClaims(ctx *fasthttp.RequestCtx, tok string) (claims token.Claims, data blobs.UploadTokenData, ok bool) {
	claims, err := s.verifyUpload(tok)
	if err != nil {
		if errors.Is(err, token.ErrExpired) {
			s.gate.RefuseBody(ctx, http.StatusGone, "expired", "the upload link has expired")
		} else {
			s.gate.RefuseBody(ctx, http.StatusForbidden, "invalid_token", "the upload link is not valid")
		}
		return claims, data, false
	}
	data = uploadData(claims)
	return claims, data, s.uploadCaller(ctx, claims, data)
}

// uploadData is the Data an upload token carries (request_upload's mode
// and field); zero for a token without it.
func uploadData(claims token.Claims) blobs.UploadTokenData {
	var data blobs.UploadTokenData
	if len(claims.Data) > 0 {
		_ = json.Unmarshal(claims.Data, &data)
	}
	return data
}

// uploadCaller checks who uses an upload endpoint, when authentication is
// configured. A request with a bearer must be the token's principal's. A
// binary-mode endpoint (SEP-1306) needs that bearer: the client sends its
// MCP authorization. A URL-mode endpoint, which the upload page posts to,
// needs the page's login when OAuth is configured (package uploadpage); with API
// keys only the link is its own credential, bound to its principal, as is
// an endpoint minted through the control API for another party. On
// refusal it answers and reports false.
func (s *Server) uploadCaller(ctx *fasthttp.RequestCtx, claims token.Claims, data blobs.UploadTokenData) bool {
	if !s.gate.Auth.Enabled() {
		return true
	}
	hasBearer := len(ctx.Request.Header.Peek("Authorization")) > 0
	switch {
	case hasBearer || data.Mode == "binary":
		id, refused := s.gate.Identify(ctx)
		if refused == nil && id.Principal != claims.Principal {
			refused = &gate.Refusal{Status: http.StatusForbidden, Code: "forbidden", Message: "the upload endpoint belongs to another principal"}
		}
		if refused != nil {
			s.gate.Refuse(ctx, refused)
			return false
		}
	case data.Mode == "url" && s.gate.Auth.OAuth != nil:
		if sub, ok := s.pages.LoginSubject(ctx); !ok || sub != claims.Principal {
			s.gate.RefuseBody(ctx, http.StatusForbidden, "login_required", "sign in as the user the upload was requested for")
			return false
		}
	}
	return true
}

// reserveUpload takes the token's upload id before any byte is accepted, so
// of concurrent or repeated uploads with one token exactly one proceeds, on
// one node or many; the others are refused with 409. The claim is charged
// to the token's principal first (onetime.Facts.ClaimToken): over the claims rate the
// answer is 429 and the link stays usable. On refusal it answers and
// reports false.
func (s *Server) reserveUpload(ctx *fasthttp.RequestCtx, claims token.Claims) bool {
	err := s.facts.ClaimToken(context.Background(), onetime.Uploads, claims, s.mcp.Claims())
	switch {
	case err == nil:
		return true
	case errors.As(err, new(*budget.Exceeded)):
		s.gate.DrainSmall(ctx)
		gate.RefuseClaimRate(ctx, err)
	case errors.Is(err, onetime.ErrClaimed):
		s.gate.RefuseBody(ctx, http.StatusConflict, "already_used", "the upload link was already used (or an upload with it is in progress)")
	default:
		s.log.Error("server: reserving an upload id failed", "uploadId", claims.Nonce, "err", err)
		s.gate.RefuseBody(ctx, http.StatusServiceUnavailable, "unavailable", "the upload cannot start right now; try again")
	}
	return false
}

// failUpload logs a failed upload and answers its error, closing the
// connection unless the body was merely truncated. What is left of the
// body is read first (up to gate.DrainLimit, under the rate rule), so a client
// still sending does not have the answer destroyed by the reset a close
// with unread bytes causes.
func (s *Server) failUpload(ctx *fasthttp.RequestCtx, uploadID string, uerr *uploadError, body io.Reader) {
	if uerr.status >= 500 {
		s.log.Error("server: upload", "uploadId", uploadID, "err", uerr.err)
	} else {
		s.log.Debug("server: upload refused", "uploadId", uploadID, "code", uerr.code, "msg", uerr.msg)
	}
	finishBody(ctx, body)
	if uerr.status != http.StatusBadRequest || uerr.code != "truncated" {
		ctx.SetConnectionClose()
	}
	gate.APIErrorFor(ctx, uerr.err, uerr.status, uerr.code, uerr.msg)
}

// completeUpload finishes the request body, reports the upload done and
// answers 201 with the stored files.
func (s *Server) completeUpload(ctx *fasthttp.RequestCtx, up *upload, infos []storage.Info) {
	finishBody(ctx, up.body)
	s.blobs.UploadDone(up.claims.Nonce, infos)
	files := make([]Blob, len(infos))
	for i, info := range infos {
		info.Key = s.gate.Tenancy.Local(up.claims.Principal, info.Key)
		files[i] = blobObject(info)
	}
	res := map[string]any{"uploadId": up.claims.Nonce, "status": "completed", "files": files}
	if len(infos) == 1 {
		res["blob"] = files[0]
	}
	gate.WriteJSON(ctx, http.StatusCreated, res)
}

type uploadError struct {
	status    int
	code, msg string
	err       error
}

// upload is one request to an upload endpoint.
type upload struct {
	srv    *Server
	ctx    *fasthttp.RequestCtx
	claims token.Claims
	data   blobs.UploadTokenData
	max    int64
	body   io.Reader
	total  int64 // Content-Length, -1 unknown
	read   countingReader
	open   []*ingest.Upload
	lastP  int64
}

// countingReader counts body bytes and reports progress.
type countingReader struct {
	r  io.Reader
	n  int64
	up *upload
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	if c.n-c.up.lastP >= uploadProgressEvery {
		c.up.lastP = c.n
		c.up.srv.blobs.UploadProgress(c.up.claims.Nonce, c.n, c.up.total)
	}
	return n, err
}

// abortAll discards the parts stored but not committed; after commit
// there are none.
func (u *upload) abortAll() {
	for _, up := range u.open {
		up.Abort()
	}
	u.open = nil
}

// multipartError is a malformed multipart body.
type multipartError struct{ err error }

func (e *multipartError) Error() string { return "server: multipart body: " + e.err.Error() }
func (e *multipartError) Unwrap() error { return e.err }

// uploadErrorOf is the upload endpoints' one table from the errors of the
// ingest path, of storage and of the request body to HTTP answers.
func (u *upload) uploadErrorOf(err error) *uploadError {
	var (
		ie *ingest.Error
		me *multipartError
		be *pace.BodyError
		ne interface{ Timeout() bool }
	)
	switch {
	case errors.Is(err, storage.ErrQuotaExceeded):
		return &uploadError{http.StatusForbidden, "quota_exceeded", "quota exceeded", err} // failUpload adds the figures
	case errors.Is(err, ingest.ErrTooLarge), errors.Is(err, storage.ErrTooLarge):
		return &uploadError{http.StatusRequestEntityTooLarge, "too_large", fmt.Sprintf("the file is larger than the limit of %d bytes", u.max), err}
	case errors.Is(err, storage.ErrInsufficientStorage):
		return &uploadError{http.StatusInsufficientStorage, "insufficient_storage", msgNoSpace, err}
	case errors.Is(err, storage.ErrExists):
		return &uploadError{http.StatusConflict, "already_used", "the upload link was already used", err}
	case errors.Is(err, storage.ErrInvalidKey):
		return &uploadError{http.StatusBadRequest, "invalid_key", "the file name does not make a valid key", err}
	case errors.Is(err, storage.ErrPathConflict):
		return &uploadError{http.StatusConflict, "path_conflict", conflictMessage(err), err}
	case errors.Is(err, storage.ErrInvalidMediaType):
		return &uploadError{http.StatusBadRequest, "bad_content_type", fmt.Sprintf("the part's Content-Type must be at most %d bytes without control characters", storage.MaxMediaTypeLen), err}
	case errors.Is(err, storage.ErrInvalidFilename):
		return &uploadError{http.StatusBadRequest, "invalid_filename", filenameMessage(err), err}
	case errors.Is(err, ingest.ErrNotAccepted) && errors.As(err, &ie):
		return &uploadError{http.StatusUnsupportedMediaType, "type_not_accepted", ie.Detail, err}
	case errors.Is(err, ingest.ErrTypeMismatch) && errors.As(err, &ie):
		return &uploadError{http.StatusUnsupportedMediaType, "type_mismatch", ie.Detail, err}
	case errors.Is(err, ingest.ErrEmpty):
		return &uploadError{http.StatusBadRequest, "empty", "the file is empty", err}
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, errShortBody):
		return &uploadError{http.StatusBadRequest, "truncated", "the upload ended early; nothing was stored", err}
	case errors.As(err, &ne) && ne.Timeout():
		return &uploadError{http.StatusRequestTimeout, "timeout", msgTooSlow, err}
	case errors.As(err, &be):
		return &uploadError{http.StatusBadRequest, "bad_body", "the request body is malformed (its chunked framing); nothing was stored", err}
	case errors.As(err, &me):
		return &uploadError{http.StatusBadRequest, "bad_multipart", "malformed multipart body; nothing was stored", err}
	}
	return &uploadError{http.StatusInternalServerError, "internal", "internal error", err}
}

// part stores one file from r through the ingest path (maxSize as bytes
// arrive, accept on the declared and the sniffed type, sniffing, empty
// files); the upload stays open (uncommitted) until the whole body has
// arrived.
func (u *upload) part(r io.Reader, filename, contentType string) *uploadError {
	mt := storage.DefaultMediaType
	if contentType != "" {
		t, params, err := mime.ParseMediaType(contentType)
		if err != nil {
			return &uploadError{http.StatusBadRequest, "bad_content_type", "malformed Content-Type", err}
		}
		mt = t
		if cs := params["charset"]; cs != "" && strings.HasPrefix(t, "text/") {
			mt += "; charset=" + strings.ToLower(cs)
		}
	}
	up, err := ingest.Begin(context.Background(), u.srv.env.Backend, ingest.Spec{ // the token holds the store key
		Key: token.UploadObjectKey(u.claims, filename), MediaType: mt, Filename: filename,
		MaxSize: u.max, Accept: u.claims.Accept, IfNotExists: true, Expires: storage.ExpiryAfter(u.claims.BlobTTL)})
	if err != nil {
		return u.uploadErrorOf(err)
	}
	u.open = append(u.open, up)
	// Parts arrive in small reads; ingest gathers them into 1 MiB writes
	// that storage hashes and writes on another goroutine while the next
	// bytes are parsed.
	if _, err := io.Copy(up, r); err != nil {
		return u.uploadErrorOf(err)
	}
	if err := up.Close(); err != nil {
		return u.uploadErrorOf(err)
	}
	return nil
}

// commit makes every stored part visible, in order.
func (u *upload) commit() ([]storage.Info, *uploadError) {
	var infos []storage.Info
	for i, up := range u.open {
		info, err := up.Commit(context.Background())
		if err != nil {
			for _, up := range u.open[i+1:] {
				up.Abort()
			}
			u.open = nil
			return nil, u.uploadErrorOf(err)
		}
		infos = append(infos, info)
	}
	u.open = nil
	return infos, nil
}

func (u *upload) put() ([]storage.Info, *uploadError) {
	defer u.abortAll()
	u.read = countingReader{r: u.body, up: u}
	filename := ""
	if cd := string(u.ctx.Request.Header.Peek("Content-Disposition")); cd != "" {
		if _, p, err := mime.ParseMediaType(cd); err == nil {
			filename = p["filename"]
		}
	}
	var r io.Reader = &u.read
	if cl := u.ctx.Request.Header.ContentLength(); cl >= 0 {
		r = &exactReader{r: r, n: int64(cl)}
	}
	if e := u.part(r, filename, string(u.ctx.Request.Header.ContentType())); e != nil {
		return nil, e
	}
	return u.commit()
}

// exactReader reports a body shorter than its Content-Length.
type exactReader struct {
	r io.Reader
	n int64
}

func (e *exactReader) Read(p []byte) (int, error) {
	if e.n <= 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > e.n {
		p = p[:e.n]
	}
	n, err := e.r.Read(p)
	e.n -= int64(n)
	if err == io.EOF && e.n > 0 {
		err = errShortBody
	}
	return n, err
}

// Bounds of a multipart upload body besides its size: parts of any kind,
// header fields of one part and their bytes.
const (
	MaxParts           = 64 // the most parts one upload body may have
	maxPartHeaders     = 16
	maxPartHeaderBytes = 8 << 10
	// maxDispositionBytes: a longer Content-Disposition counts against
	// maxPartHeaderBytes; a shorter one is left to the filename rule.
	maxDispositionBytes = 64 << 10
)

// checkPart refuses the n-th part when the body has too many parts or the
// part too many or too long header fields.
func checkPart(p *multipart.Part, n int) *uploadError {
	if n > MaxParts {
		return &uploadError{http.StatusBadRequest, "too_many_parts", fmt.Sprintf("the body has more than %d parts", MaxParts), nil}
	}
	fields, size := 0, 0
	for name, values := range p.Header {
		for _, v := range values {
			fields++
			if name != "Content-Disposition" || len(v) > maxDispositionBytes {
				// The filename in Content-Disposition has its own rule
				// (invalid_filename, over 255 bytes), checked later.
				size += len(name) + len(v)
			}
		}
	}
	if fields > maxPartHeaders || size > maxPartHeaderBytes {
		return &uploadError{http.StatusBadRequest, "part_headers_too_large",
			fmt.Sprintf("a part has more than %d header fields or %d bytes of headers", maxPartHeaders, maxPartHeaderBytes), nil}
	}
	return nil
}

func (u *upload) multipart() ([]storage.Info, *uploadError) {
	mt, params, err := mime.ParseMediaType(string(u.ctx.Request.Header.ContentType()))
	if err != nil || mt != "multipart/form-data" || params["boundary"] == "" {
		return nil, &uploadError{http.StatusUnsupportedMediaType, "unsupported_media_type",
			"POST needs a multipart/form-data body with a \"file\" part; PUT takes a raw body", err}
	}
	defer u.abortAll()
	u.read = countingReader{r: u.body, up: u}
	// mime/multipart reads through its own 4 KiB bufio.Reader; under it a
	// buffer that grows to 1 MiB once the body arrives fast keeps socket
	// reads large without a trickling body holding 1 MiB.
	lb := lazybody.New(&u.read)
	defer lb.Release()
	mr := multipart.NewReader(lb, params["boundary"])
	files, parts := 0, 0
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, u.uploadErrorOf(&multipartError{err})
		}
		parts++
		if e := checkPart(p, parts); e != nil {
			return nil, e
		}
		if p.FormName() != "file" {
			// Other form fields are read and ignored (bounded).
			if _, err := io.CopyN(io.Discard, p, 64<<10+1); err != nil && err != io.EOF {
				return nil, u.uploadErrorOf(&multipartError{err})
			}
			continue
		}
		files++
		if files > 1 && !u.data.Multiple {
			return nil, &uploadError{http.StatusBadRequest, "one_file", "this upload link takes one file", nil}
		}
		if files > 1 && u.claims.Object != "" {
			return nil, &uploadError{http.StatusBadRequest, "one_file", "this upload link names one key and takes one file", nil}
		}
		if e := u.part(p, p.FileName(), p.Header.Get("Content-Type")); e != nil {
			return nil, e
		}
	}
	if files == 0 {
		return nil, &uploadError{http.StatusBadRequest, "no_file", `the body has no "file" part`, nil}
	}
	// Every part arrived and the closing boundary was seen: commit.
	return u.commit()
}

// finishBody reads what is left of a request body once the upload has what it
// needs (a multipart epilogue, the terminating chunk of a chunked body), so
// the kept-alive connection starts the next request at the right byte. A
// longer remainder than gate.DrainLimit closes the connection instead.
func finishBody(ctx *fasthttp.RequestCtx, body io.Reader) {
	n, err := io.CopyN(io.Discard, body, gate.DrainLimit+1)
	if err != io.EOF || n > gate.DrainLimit {
		ctx.SetConnectionClose()
	}
}
