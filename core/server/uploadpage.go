package server

import (
	"bytes"
	"crypto/rand"
	"embed"
	"encoding/base64"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"strings"

	"github.com/valyala/fasthttp"

	"github.com/mcpblob/mcpblob/core/token"
)

// The upload page of URL-mode elicitation (DESIGN.md data flow 5):
// GET /upload/{token} serves a small page (file picker, drag and drop, a
// progress bar fed by XHR upload progress, clear errors) that posts the file
// as multipart/form-data to /u/{token}. The page carries no third-party
// resources; its inline script and style run under a per-response CSP nonce,
// and Referrer-Policy keeps the token out of Referer headers.

//go:embed uploadpage/index.html
var uploadPageFS embed.FS

var uploadPage = template.Must(template.ParseFS(uploadPageFS, "uploadpage/index.html"))

type uploadPageData struct {
	Nonce      string
	Error      string
	Endpoint   string
	MaxSize    int64
	MaxHuman   string
	Accept     string // for the input's accept attribute
	AcceptList string
}

func (s *Server) serveUploadPage(ctx *fasthttp.RequestCtx) {
	method := string(ctx.Method())
	if method != http.MethodGet && method != http.MethodHead {
		s.drainSmall(ctx)
		methodNotAllowed(ctx, "GET, HEAD")
		return
	}
	if why := s.checkHostOrigin(ctx); why != "" {
		apiError(ctx, http.StatusForbidden, "forbidden", why)
		return
	}
	nonce := make([]byte, 16)
	_, _ = rand.Read(nonce)
	d := uploadPageData{Nonce: base64.RawStdEncoding.EncodeToString(nonce)}
	tok := strings.TrimPrefix(string(ctx.Path()), "/upload/")
	status := http.StatusOK
	claims, err := s.verifyUpload(tok)
	switch {
	case errors.Is(err, token.ErrExpired):
		status, d.Error = http.StatusGone, "This upload link has expired. Ask your assistant for a new one."
	case err != nil:
		status, d.Error = http.StatusForbidden, "This upload link is not valid."
	default:
		d.Endpoint = "/u/" + tok
		d.MaxSize = claims.MaxSize
		if d.MaxSize <= 0 || d.MaxSize > s.maxUpload() {
			d.MaxSize = s.maxUpload()
		}
		d.MaxHuman = humanBytes(d.MaxSize)
		d.Accept = strings.Join(claims.Accept, ",")
		d.AcceptList = d.Accept
	}
	var buf bytes.Buffer
	if err := uploadPage.Execute(&buf, d); err != nil {
		s.log.Error("server: upload page", "err", err)
		apiError(ctx, http.StatusInternalServerError, "internal", "internal error")
		return
	}
	h := &ctx.Response.Header
	h.Set("Cache-Control", "no-store")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Content-Security-Policy", fmt.Sprintf("default-src 'none'; script-src 'nonce-%s'; style-src 'nonce-%s'; connect-src 'self'; form-action 'none'; frame-ancestors 'none'; base-uri 'none'", d.Nonce, d.Nonce))
	ctx.SetStatusCode(status)
	ctx.SetContentType("text/html; charset=utf-8")
	ctx.SetBody(buf.Bytes())
}

func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d bytes", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
