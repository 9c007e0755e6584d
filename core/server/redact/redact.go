package redact

import (
	"context"
	"fmt"
	"log/slog"
	"regexp"
	"strings"
)

// Log redaction (docs/security.md, "secrets in logs": never log data URIs,
// tokens, keys or presigned queries, at any level). Every logger the
// server uses goes through [NewHandler], so a secret that reaches a
// log line by any path — fasthttp's own messages, an error that quotes a
// URL, a header echoed in a diagnostic — is replaced before the line is
// formatted. fasthttp is also told not to dump raw header buffers
// (Server.SecureErrorLogMessage); the redactor is the second line.

// redactRules are applied in order; each replaces a secret with a marker
// and keeps the words around it so the line still says what happened.
var redactRules = []struct {
	re   *regexp.Regexp
	repl string
}{
	// Credentials in an Authorization header or anywhere after its scheme
	// word ("Bearer mcpb_…", "Basic dXNlcjpwYXNz").
	{regexp.MustCompile(`(?i)\b(bearer|basic)(\s+|%20|\+)[^\s"'\\,;]+`), "$1$2[redacted]"},
	// Header lines whose whole value is a credential or a token.
	{regexp.MustCompile(`(?i)\b(authorization|proxy-authorization|cookie|set-cookie|mcp-session-id|x-amz-security-token)(\s*[:=]\s*)[^\r\n"\\]+`), "$1$2[redacted]"},
	// mcpblob API keys wherever they appear.
	{regexp.MustCompile(`mcpb_[A-Za-z0-9_-]{8,}`), "mcpb_[redacted]"},
	// Presigned S3 queries: everything after '?' once it carries a signature
	// or credential, and such parameters standing alone.
	{regexp.MustCompile(`\?[^\s"'\\<>]*(?i:x-amz-|signature=|awsaccesskeyid=|x-goog-)[^\s"'\\<>]*`), "?[redacted]"},
	{regexp.MustCompile(`(?i)\b(x-amz-(?:signature|credential|security-token)=)[^&\s"'\\]+`), "$1[redacted]"},
	// Data URI payloads: the header stays (it says what was sent), the
	// payload goes.
	{regexp.MustCompile(`(?i)\bdata:([^,\s"'\\]{0,256}),[^\s"']+`), "data:$1,[redacted]"},
	// Signed (base64url "." base64url MAC) and sealed ("~" kid "." box)
	// tokens: session ids, request states, upload and download tokens, in
	// paths (/u/…, /d/…, /upload/…), headers or JSON.
	{regexp.MustCompile(`~?[A-Za-z0-9_-]{2,}\.[A-Za-z0-9_-]{22,}`), "[redacted-token]"},
}

// String returns s with bearer keys, API keys, token signatures (whole
// tokens), presigned queries and data URI payloads replaced by markers.
// It is meant for log lines, not for anything that must round-trip.
func String(s string) string {
	if !strings.ContainsAny(s, ".:?_=") {
		return s // no rule can match: the common case of short values
	}
	for _, r := range redactRules {
		s = r.re.ReplaceAllString(s, r.repl)
	}
	return s
}

// redactHandler redacts the message and every attribute of each record
// before the wrapped handler sees it.
type redactHandler struct{ h slog.Handler }

// NewHandler wraps h so that no record it handles carries a secret
// (see [String]): the message, string values, errors, Stringers and other
// values whose formatted text needs redaction (replaced by that text,
// redacted), inside groups too. Values without secrets pass unchanged.
// Wrapping an already redacting handler returns it as is.
func NewHandler(h slog.Handler) slog.Handler {
	if _, ok := h.(*redactHandler); ok {
		return h
	}
	return &redactHandler{h: h}
}

// Enabled implements slog.Handler.
func (r *redactHandler) Enabled(ctx context.Context, l slog.Level) bool { return r.h.Enabled(ctx, l) }

// Handle implements slog.Handler.
func (r *redactHandler) Handle(ctx context.Context, rec slog.Record) error {
	if clean(rec) {
		return r.h.Handle(ctx, rec) // the common access line: no copy
	}
	out := slog.NewRecord(rec.Time, rec.Level, String(rec.Message), rec.PC)
	rec.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(redactAttr(a))
		return true
	})
	return r.h.Handle(ctx, out)
}

// clean reports whether rec would pass redaction unchanged: its message and
// string values need no rule, and it holds only plain scalar values (an
// error, Stringer, group or LogValuer takes the copying path).
func clean(rec slog.Record) bool {
	ok := String(rec.Message) == rec.Message
	rec.Attrs(func(a slog.Attr) bool {
		switch a.Value.Kind() {
		case slog.KindString:
			s := a.Value.String()
			ok = String(s) == s
		case slog.KindAny, slog.KindGroup, slog.KindLogValuer:
			ok = false
		}
		return ok
	})
	return ok
}

// WithAttrs implements slog.Handler.
func (r *redactHandler) WithAttrs(as []slog.Attr) slog.Handler {
	red := make([]slog.Attr, len(as))
	for i, a := range as {
		red[i] = redactAttr(a)
	}
	return &redactHandler{h: r.h.WithAttrs(red)}
}

// WithGroup implements slog.Handler.
func (r *redactHandler) WithGroup(name string) slog.Handler {
	return &redactHandler{h: r.h.WithGroup(name)}
}

// redactAttr returns a with its value redacted.
func redactAttr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, String(v.String()))
	case slog.KindGroup:
		g := v.Group()
		red := make([]any, len(g))
		for i, ga := range g {
			red[i] = redactAttr(ga)
		}
		return slog.Group(a.Key, red...)
	case slog.KindAny:
		var s string
		switch x := v.Any().(type) {
		case error:
			s = x.Error()
		case fmt.Stringer:
			s = x.String()
		default:
			s = fmt.Sprintf("%+v", x)
		}
		if red := String(s); red != s {
			return slog.String(a.Key, red)
		}
	}
	return slog.Attr{Key: a.Key, Value: v}
}

// Path shortens the tokens in /d/, /u/ and /upload/ paths for logs: a
// token is a credential and is never logged in full.
func Path(p string) string {
	for _, prefix := range []string{"/d/", "/u/", "/upload/"} {
		if tok, ok := strings.CutPrefix(p, prefix); ok && len(tok) > 12 {
			return prefix + tok[:8] + "…"
		}
	}
	return p
}
