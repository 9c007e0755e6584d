package server

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"path"
	"strings"

	"github.com/valyala/fasthttp"

	"github.com/mcpblob/mcpblob/core/codec"
	"github.com/mcpblob/mcpblob/core/mcp"
	"github.com/mcpblob/mcpblob/core/token"
	"github.com/mcpblob/mcpblob/storage"
)

// Upload endpoints (DESIGN.md data flows 4 and 5): POST /u/{token} with a
// multipart/form-data body (one or, when the token allows it, several parts
// named "file"; filename from Content-Disposition, type from the part's
// Content-Type), or PUT /u/{token} with a raw body (Content-Type, optional
// Content-Disposition filename). The body is read as a stream — the
// multipart reader runs over the request body stream, nothing is
// pre-parsed — and goes straight to storage.Create, with the token's
// maxSize enforced as bytes arrive, the part's type checked against the
// token's accept list and sniffed (magic bytes) before anything is
// committed. Nothing is visible until the whole body arrived: a truncated
// upload stores nothing.
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
	if why := s.checkHostOrigin(ctx); why != "" {
		s.refuseBody(ctx, http.StatusForbidden, "forbidden", why)
		return
	}
	method := string(ctx.Method())
	if method != http.MethodPost && method != http.MethodPut {
		s.drainSmall(ctx)
		methodNotAllowed(ctx, "POST, PUT")
		return
	}
	ctx.Response.Header.Set("Cache-Control", "no-store")
	tok := strings.TrimPrefix(string(ctx.Path()), "/u/")
	claims, err := s.verifyUpload(tok)
	if err != nil {
		if errors.Is(err, token.ErrExpired) {
			s.refuseBody(ctx, http.StatusGone, "expired", "the upload link has expired")
		} else {
			s.refuseBody(ctx, http.StatusForbidden, "invalid_token", "the upload link is not valid")
		}
		return
	}
	var data mcp.UploadTokenData
	if len(claims.Data) > 0 {
		_ = json.Unmarshal(claims.Data, &data)
	}
	if hasAuth := len(ctx.Request.Header.Peek("Authorization")) > 0; hasAuth || (data.Mode == "binary" && len(s.keys) > 0) {
		principal, ok := s.authenticate(ctx)
		if !ok || principal != claims.Principal {
			ctx.Response.Header.Set("WWW-Authenticate", `Bearer realm="mcpblob"`)
			s.refuseBody(ctx, http.StatusUnauthorized, "unauthorized", "the upload link belongs to another principal")
			return
		}
	}
	if claims.Object == "" {
		// Reuse check for server-picked keys (uploads/<id>/<name>): any
		// object under the upload's prefix means the token was used.
		page, err := s.opts.Backend.List(context.Background(), mcp.UploadPrefix(claims.Nonce), "", 1)
		if err == nil && len(page.Items) > 0 {
			s.refuseBody(ctx, http.StatusConflict, "already_used", "the upload link was already used")
			return
		}
	}
	maxSize := claims.MaxSize
	if maxSize <= 0 || maxSize > s.maxUpload() {
		maxSize = s.maxUpload()
	}
	if cl := ctx.Request.Header.ContentLength(); cl > 0 && int64(cl) > maxSize+64<<10 {
		s.refuseBody(ctx, http.StatusRequestEntityTooLarge, "too_large", fmt.Sprintf("the file is larger than the limit of %d bytes", maxSize))
		return
	}
	up := &upload{srv: s, ctx: ctx, claims: claims, data: data, max: maxSize,
		body: &deadlineReader{r: s.requestBody(ctx), conn: ctx.Conn(), timeout: s.opts.ReadTimeout}}
	if cl := ctx.Request.Header.ContentLength(); cl > 0 {
		up.total = int64(cl)
	} else {
		up.total = -1
	}
	var infos []storage.Info
	var uerr *uploadError
	if method == http.MethodPut {
		infos, uerr = up.put()
	} else {
		infos, uerr = up.multipart()
	}
	if uerr != nil {
		if uerr.status >= 500 {
			s.log.Error("server: upload", "uploadId", claims.Nonce, "err", uerr.err)
		} else {
			s.log.Debug("server: upload refused", "uploadId", claims.Nonce, "code", uerr.code, "msg", uerr.msg)
		}
		s.drainSmall(ctx)
		if uerr.status != http.StatusBadRequest || uerr.code != "truncated" {
			ctx.SetConnectionClose()
		}
		apiError(ctx, uerr.status, uerr.code, uerr.msg)
		return
	}
	finishBody(ctx, up.body)
	s.mcp.UploadDone(claims.Nonce, infos)
	files := make([]blobJSON, len(infos))
	for i, info := range infos {
		files[i] = blobObject(info)
	}
	res := map[string]any{"uploadId": claims.Nonce, "status": "completed", "files": files}
	if len(infos) == 1 {
		res["blob"] = files[0]
	}
	writeJSON(ctx, http.StatusCreated, res)
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
	data   mcp.UploadTokenData
	max    int64
	body   io.Reader
	total  int64 // Content-Length, -1 unknown
	read   countingReader
	open   []storage.Writer
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
		c.up.srv.mcp.UploadProgress(c.up.claims.Nonce, c.n, c.up.total)
	}
	return n, err
}

func (u *upload) abortAll() {
	for _, w := range u.open {
		_ = w.Abort(context.Background())
	}
	u.open = nil
}

// storeError maps a storage or body error.
func (u *upload) storeError(err error) *uploadError {
	var se *sniffError
	switch {
	case errors.Is(err, storage.ErrTooLarge):
		return &uploadError{http.StatusRequestEntityTooLarge, "too_large", fmt.Sprintf("the file is larger than the limit of %d bytes", u.max), err}
	case errors.Is(err, storage.ErrExists):
		return &uploadError{http.StatusConflict, "already_used", "the upload link was already used", err}
	case errors.Is(err, storage.ErrInvalidKey):
		return &uploadError{http.StatusBadRequest, "invalid_key", "the file name does not make a valid key", err}
	case errors.As(err, &se):
		return &uploadError{http.StatusUnsupportedMediaType, "type_mismatch", se.msg, err}
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, errShortBody):
		return &uploadError{http.StatusBadRequest, "truncated", "the upload ended early; nothing was stored", err}
	}
	var ne interface{ Timeout() bool }
	if errors.As(err, &ne) && ne.Timeout() {
		return &uploadError{http.StatusRequestTimeout, "timeout", "the upload stalled; nothing was stored", err}
	}
	if strings.Contains(err.Error(), "multipart") {
		return &uploadError{http.StatusBadRequest, "bad_multipart", "malformed multipart body; nothing was stored", err}
	}
	return &uploadError{http.StatusInternalServerError, "internal", "internal error", err}
}

// sniffError reports content that contradicts its declared type.
type sniffError struct{ msg string }

func (e *sniffError) Error() string { return "server: " + e.msg }

// headWriter keeps the first bytes written (for sniffing).
type headWriter struct {
	w    io.Writer
	head []byte
}

func (h *headWriter) Write(p []byte) (int, error) {
	if len(h.head) < 512 {
		h.head = append(h.head, p[:min(len(p), 512-len(h.head))]...)
	}
	return h.w.Write(p)
}

// part stores one file from r; the writer stays open (uncommitted) until
// the whole body has arrived.
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
	base, _, _ := strings.Cut(mt, ";")
	if len(u.claims.Accept) > 0 && !codec.MatchAccept(u.claims.Accept, base) && !extensionAccepted(u.claims.Accept, filename) {
		return &uploadError{http.StatusUnsupportedMediaType, "type_not_accepted",
			fmt.Sprintf("media type %q is not accepted (accept: %s)", base, strings.Join(u.claims.Accept, ", ")), nil}
	}
	key := token.UploadObjectKey(u.claims, filename)
	w, err := u.srv.opts.Backend.Create(context.Background(), key, storage.CreateOptions{
		MediaType: mt, Filename: filename, MaxSize: u.max, IfNotExists: true})
	if err != nil {
		return u.storeError(err)
	}
	u.open = append(u.open, w)
	// Parts arrive in small reads (mime/multipart buffers 4 KiB): gather
	// them into 1 MiB writes that storage hashes and writes on another
	// goroutine while the next bytes are parsed.
	aw := mcp.NewAsyncWriter(w)
	hw := &headWriter{w: aw}
	_, err = io.CopyBuffer(hw, r, make([]byte, 256<<10))
	if cerr := aw.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return u.storeError(err)
	}
	if w.Written() == 0 {
		return &uploadError{http.StatusBadRequest, "empty", "the file is empty", nil}
	}
	if why := mcp.SniffProblem(base, hw.head); why != "" {
		return u.storeError(&sniffError{why})
	}
	return nil
}

// commit makes every stored part visible, in order.
func (u *upload) commit() ([]storage.Info, *uploadError) {
	var infos []storage.Info
	for i, w := range u.open {
		info, err := w.Commit(context.Background())
		if err != nil {
			for _, w := range u.open[i+1:] {
				_ = w.Abort(context.Background())
			}
			u.open = nil
			return nil, u.storeError(err)
		}
		infos = append(infos, info)
	}
	u.open = nil
	return infos, nil
}

func (u *upload) put() ([]storage.Info, *uploadError) {
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
		u.abortAll()
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

func (u *upload) multipart() ([]storage.Info, *uploadError) {
	mt, params, err := mime.ParseMediaType(string(u.ctx.Request.Header.ContentType()))
	if err != nil || mt != "multipart/form-data" || params["boundary"] == "" {
		return nil, &uploadError{http.StatusUnsupportedMediaType, "unsupported_media_type",
			"POST needs a multipart/form-data body with a \"file\" part; PUT takes a raw body", err}
	}
	u.read = countingReader{r: u.body, up: u}
	// mime/multipart reads through a 4 KiB bufio.Reader unless handed a
	// larger one: 1 MiB keeps socket reads and part chunks large.
	mr := multipart.NewReader(bufio.NewReaderSize(&u.read, 1<<20), params["boundary"])
	files := 0
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			u.abortAll()
			return nil, u.storeError(fmt.Errorf("multipart: %w", err))
		}
		if p.FormName() != "file" {
			// Other form fields are read and ignored (bounded).
			if _, err := io.CopyN(io.Discard, p, 64<<10+1); err != nil && err != io.EOF {
				u.abortAll()
				return nil, u.storeError(fmt.Errorf("multipart: %w", err))
			}
			continue
		}
		files++
		if files > 1 && !u.data.Multiple {
			u.abortAll()
			return nil, &uploadError{http.StatusBadRequest, "one_file", "this upload link takes one file", nil}
		}
		if files > 1 && u.claims.Object != "" {
			u.abortAll()
			return nil, &uploadError{http.StatusBadRequest, "one_file", "this upload link names one key and takes one file", nil}
		}
		if e := u.part(p, p.FileName(), p.Header.Get("Content-Type")); e != nil {
			u.abortAll()
			return nil, e
		}
	}
	if files == 0 {
		return nil, &uploadError{http.StatusBadRequest, "no_file", `the body has no "file" part`, nil}
	}
	// Every part arrived and the closing boundary was seen: commit.
	return u.commit()
}

// extensionAccepted reports whether filename ends with one of accept's
// dot-extension entries (".pdf"), which codec.MatchAccept leaves aside: a
// part named "report.pdf" sent as application/octet-stream passes an
// accept list of [".pdf"]; its content is still sniffed.
func extensionAccepted(accept []string, filename string) bool {
	ext := strings.ToLower(path.Ext(filename))
	if ext == "" {
		return false
	}
	for _, a := range accept {
		if strings.EqualFold(strings.TrimSpace(a), ext) {
			return true
		}
	}
	return false
}

// finishBody reads what is left of a request body once the upload has what it
// needs (a multipart epilogue, the terminating chunk of a chunked body), so
// the kept-alive connection starts the next request at the right byte. A
// longer remainder than drainLimit closes the connection instead.
func finishBody(ctx *fasthttp.RequestCtx, body io.Reader) {
	n, err := io.CopyN(io.Discard, body, drainLimit+1)
	if err != io.EOF || n > drainLimit {
		ctx.SetConnectionClose()
	}
}
