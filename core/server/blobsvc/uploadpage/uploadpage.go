package uploadpage

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

	"github.com/mcpblob/mcpblob/core/server/gate"
	"github.com/mcpblob/mcpblob/core/token"
)

// The upload page of URL-mode elicitation (docs/uploads.md):
// GET /upload/{token} serves a small page (file picker, drag and drop, a
// progress bar fed by XHR upload progress, clear errors) that sends the file
// to /u/{token}: with tus (/u/{token}/tus/, package linktus) when the
// server offers it, remembering the upload's URL in localStorage per link
// and file so that a dropped connection or a reload (and the same file
// chosen again) resumes from the server's offset; else as one
// multipart/form-data POST. The page carries no third-party
// resources; its inline script and style run under a per-response CSP nonce,
// and Referrer-Policy keeps the token out of Referer headers. With OAuth
// configured, a URL-mode link's page first signs its user in and checks
// they are the user the upload is for (login.go); with API keys only, the
// link is its own credential.

//go:embed index.html
var uploadPageFS embed.FS

var uploadPage = template.Must(template.ParseFS(uploadPageFS, "index.html"))

type uploadPageData struct {
	Nonce      string
	Error      string
	Endpoint   string
	Tus        string // the tus creation endpoint, when offered
	MaxSize    int64
	MaxHuman   string
	Accept     string // for the input's accept attribute
	AcceptList string
}

func (s *Server) serveUploadPage(ctx *fasthttp.RequestCtx) {
	method := string(ctx.Method())
	if method != http.MethodGet && method != http.MethodHead {
		s.gate.DrainSmall(ctx)
		gate.MethodNotAllowed(ctx, "GET, HEAD")
		return
	}
	if why := s.gate.CheckHostOrigin(ctx); why != "" {
		gate.APIError(ctx, http.StatusForbidden, "forbidden", why)
		return
	}
	tok := strings.TrimPrefix(string(ctx.Path()), "/upload/")
	claims, err := s.verifyUpload(tok)
	// A valid link may first need its user signed in (login.go).
	if err == nil && !s.uploadPageLogin(ctx, tok, claims) {
		return
	}
	d := uploadPageData{Nonce: newNonce()}
	status := http.StatusOK
	switch {
	case errors.Is(err, token.ErrExpired):
		status, d.Error = http.StatusGone, "This upload link has expired. Ask your assistant for a new one."
	case err != nil:
		status, d.Error = http.StatusForbidden, "This upload link is not valid."
	default:
		d.Endpoint = "/u/" + tok
		if s.env.Resumable {
			d.Tus = d.Endpoint + "/tus/"
		}
		d.MaxSize = claims.MaxSize
		if d.MaxSize <= 0 || d.MaxSize > s.env.MaxUpload {
			d.MaxSize = s.env.MaxUpload
		}
		d.MaxHuman = humanBytes(d.MaxSize)
		d.Accept = strings.Join(claims.Accept, ",")
		d.AcceptList = d.Accept
	}
	csp := fmt.Sprintf("default-src 'none'; script-src 'nonce-%s'; style-src 'nonce-%s'; connect-src 'self'; form-action 'none'; frame-ancestors 'none'; base-uri 'none'", d.Nonce, d.Nonce)
	s.renderPage(ctx, uploadPage, d, status, csp)
}

func newNonce() string {
	nonce := make([]byte, 16)
	_, _ = rand.Read(nonce)
	return base64.RawStdEncoding.EncodeToString(nonce)
}

// renderPage answers an HTML page with the headers every page of this
// server carries: no caching (pages name tokens and users), no referrer
// (the token is in the URL), no framing, no sniffing, and csp.
func (s *Server) renderPage(ctx *fasthttp.RequestCtx, t *template.Template, data any, status int, csp string) {
	var buf bytes.Buffer
	if err := t.Execute(&buf, data); err != nil {
		s.log.Error("server: rendering a page", "page", t.Name(), "err", err)
		gate.APIError(ctx, http.StatusInternalServerError, "internal", "internal error")
		return
	}
	h := &ctx.Response.Header
	noStore(ctx)
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Content-Security-Policy", csp)
	ctx.SetStatusCode(status)
	ctx.SetContentType("text/html; charset=utf-8")
	ctx.SetBody(buf.Bytes())
}

func noStore(ctx *fasthttp.RequestCtx) {
	ctx.Response.Header.Set("Cache-Control", "no-store")
}

// The sign-in's own pages (login.go): a message, and optionally a sign-out
// button (a same-origin POST) or a link onwards. No script.
var loginPage = template.Must(template.New("login").Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>{{.Title}} · mcpblob</title>
<style nonce="{{.Nonce}}">
:root { color-scheme: light dark; --accent: #2563eb; --err: #b91c1c; }
body { font: 16px/1.5 system-ui, sans-serif; max-width: 40rem; margin: 3rem auto; padding: 0 1rem; }
h1 { font-size: 1.4rem; }
#status { font-weight: 600; }
button { padding: .5rem 1rem; border-radius: .5rem; border: 0; background: var(--accent); color: #fff; font: inherit; cursor: pointer; }
</style>
</head>
<body>
<main>
<h1>{{.Title}}</h1>
<p id="status" role="alert">{{.Message}}</p>
{{if .SignOut}}<form method="post" action="{{.SignOut}}"><button id="signout" type="submit">Sign out</button></form>{{end}}
{{if .Retry}}<p><a id="retry" href="{{.Retry}}">{{.RetryText}}</a></p>{{end}}
</main>
</body>
</html>
`))

type loginPageData struct {
	Nonce, Title, Message string
	SignOut               string // the sign-out form's action, if any
	Retry, RetryText      string // a link onwards, if any
}

// loginMessage answers a sign-in page with a message and, when signOut is
// set, a sign-out button posting there.
func (s *Server) loginMessage(ctx *fasthttp.RequestCtx, status int, title, msg, signOut string) {
	s.renderLoginPage(ctx, status, loginPageData{Title: title, Message: msg, SignOut: signOut})
}

func (s *Server) renderLoginPage(ctx *fasthttp.RequestCtx, status int, d loginPageData) {
	d.Nonce = newNonce()
	csp := fmt.Sprintf("default-src 'none'; style-src 'nonce-%s'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'", d.Nonce)
	s.renderPage(ctx, loginPage, d, status, csp)
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
