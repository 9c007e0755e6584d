package redact

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"
)

const (
	redactKey = "mcpb_pGoenWDTy5zis0QUC05t62omWNIfKP-QQawEkHV51SM"
	redactTok = "eyJraWQiOiJ0ZXN0IiwicHVyIjoidXBsb2FkIn0.RQ5MZC7BhoO0xq6VrS1wxIj65-rh3R-gj6nRJW1uhXE"
	redactSig = "RQ5MZC7BhoO0xq6VrS1wxIj65"
	sealedTok = "~test.UVD0oQEm8tsYbRAIWipE8PADAko1J_fv2UXalADfhmHYmEtMdvyUA6cOohKp"
	presigned = "http://127.0.0.1:9000/b/k?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=minio%2F20261123%2Fus-east-1&X-Amz-Signature=4f2a9c"
)

func TestRedact(t *testing.T) {
	t.Parallel()
	secrets := map[string][]string{
		"Authorization: Bearer " + redactKey:                                    {redactKey, "pGoenWDTy5"},
		`"Authorization Bearer ` + redactKey + `\r\nHost: x"`:                   {redactKey},
		"authorization: Basic dXNlcjpwYXNzd29yZA==":                             {"dXNlcjpwYXNzd29yZA"},
		"x-api-key " + redactKey:                                                {redactKey},
		"POST /u/" + redactTok + " HTTP/1.1":                                    {redactSig},
		"GET /d/" + sealedTok:                                                   {"UVD0oQEm8tsYbRAIWipE8"},
		`Mcp-Session-Id: ` + redactTok + `\r\n`:                                 {redactSig},
		`{"requestState":"` + redactTok + `"}`:                                  {redactSig},
		"redirect to " + presigned:                                              {"4f2a9c", "minio%2F2026"},
		"X-Amz-Signature=abcdef0123&foo":                                        {"abcdef0123"},
		`"file":"data:image/png;base64,iVBORw0KGgoAAAANSUhEUg\/AAAA"`:           {"iVBORw0KGgo", "AAAA\""},
		`\"file\":\"data:text/plain;charset=utf-8,hello%20world%21\"`:           {"hello%20world"},
		"Cookie: sid=abcdefghijkl; other=1":                                     {"abcdefghijkl"},
		`"file":"DATA:text/plain;base64,SGVsbG8gd29ybGQgaGVsbG8gd29ybGQ="`:      {"SGVsbG8gd29y"},
		"error when reading request headers: contents: \"Bearer%20" + redactKey: {redactKey},
	}
	for in, bad := range secrets {
		got := String(in)
		for _, b := range bad {
			if strings.Contains(got, b) {
				t.Errorf("String(%q) = %q: still holds %q", in, got, b)
			}
		}
	}
	for _, plain := range []string{"server: request", "docs/a.txt", "127.0.0.1:8080", "1.234ms",
		`localfs: write "a/b.txt": write /data/.mcpblob/tmp/x: no space left on device`,
		"blob:///docs/readme.txt", "image/png", "uploads/81d4dad89f73/photo.jpeg", "key=a_b.c"} {
		if got := String(plain); got != plain {
			t.Errorf("String(%q) = %q, want it unchanged", plain, got)
		}
	}
}

// TestRedactHandler checks that the handler redacts the message, string,
// error, Stringer and grouped values, and attributes added with With.
func TestRedactHandler(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	log := slog.New(NewHandler(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})))
	log = log.With("auth", "Bearer "+redactKey)
	log.Debug("fasthttp: contents /u/"+redactTok,
		"err", errors.New("get "+presigned+": refused"),
		"url", stringer(presigned),
		slog.Group("req", "session", redactTok, "n", 3),
		"map", map[string]string{"file": "data:text/plain;base64,SGVsbG8gd29ybGQ="})
	out := buf.String()
	for _, b := range []string{redactKey, redactSig, "4f2a9c", "SGVsbG8gd29y"} {
		if strings.Contains(out, b) {
			t.Errorf("log holds %q:\n%s", b, out)
		}
	}
	if !strings.Contains(out, "req.n=3") || !strings.Contains(out, "fasthttp: contents /u/") {
		t.Errorf("log lost what is not secret:\n%s", out)
	}
	if NewHandler(log.Handler()) != log.Handler() {
		t.Error("wrapping a redacting handler again")
	}
}

type stringer string

func (s stringer) String() string { return string(s) }

func TestPath(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"/d/eyJraWQiOiJ0ZXN0Ii.abcdef": "/d/eyJraWQi…",
		"/u/eyJraWQiOiJ0ZXN0Ii.abcdef": "/u/eyJraWQi…",
		"/v1/blobs/a/b":                "/v1/blobs/a/b",
		"/d/short":                     "/d/short",
	} {
		if got := Path(in); got != want {
			t.Errorf("Path(%q) = %q", in, got)
		}
	}
}

// recordingHandler keeps the last record it was given.
type recordingHandler struct{ last slog.Record }

func (h *recordingHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *recordingHandler) Handle(_ context.Context, r slog.Record) error {
	h.last = r
	return nil
}
func (h *recordingHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *recordingHandler) WithGroup(string) slog.Handler      { return h }

// An access line with only clean scalars passes through without a copy;
// one string value with a secret, among many clean ones, is still redacted.
func TestRedactHandlerPassesCleanRecordsThrough(t *testing.T) {
	inner := &recordingHandler{}
	h := NewHandler(inner)
	line := func(principal string) slog.Record {
		r := slog.NewRecord(time.Now(), slog.LevelInfo, "request", 0)
		r.AddAttrs(slog.String("request_id", "r-1"), slog.String("route", "/mcp"), slog.String("method", "POST"),
			slog.Int("status", 200), slog.Int64("bytes_out", 5500), slog.Int64("bytes_in", 90),
			slog.Duration("duration", time.Millisecond), slog.String("principal", principal),
			slog.String("mcp_method", "resources/read"), slog.String("tool", ""))
		return r
	}
	clean := line("anonymous")
	if n := testing.AllocsPerRun(100, func() { _ = h.Handle(context.Background(), clean) }); n != 0 {
		t.Errorf("a clean access line cost %v allocations, want 0 (passed through)", n)
	}
	_ = h.Handle(context.Background(), line("Bearer "+redactKey))
	inner.last.Attrs(func(a slog.Attr) bool {
		if strings.Contains(a.Value.String(), redactKey) {
			t.Errorf("attr %s kept the key: %s", a.Key, a.Value)
		}
		return true
	})
}
