package telemetry

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"io"
	"log/slog"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/mcpblob/mcpblob/core/mcp"
	"github.com/mcpblob/mcpblob/core/metrics"
	"github.com/mcpblob/mcpblob/core/server/redact"
)

// Tracker opens and ends Records. Safe for concurrent use.
type Tracker struct {
	metrics   *metrics.Set
	log       *slog.Logger
	accessLog bool
	prefix    string // of minted request ids: random per process
	seq       atomic.Uint64
	tracer    Tracer // nil: tracing off (trace.go)
}

// New returns a Tracker recording into m; with accessLog, every request is
// logged to log at info.
func New(m *metrics.Set, log *slog.Logger, accessLog bool) *Tracker {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return &Tracker{metrics: m, log: log, accessLog: accessLog, prefix: hex.EncodeToString(b[:])}
}

// Metrics is the Tracker's metric set.
func (t *Tracker) Metrics() *metrics.Set { return t.metrics }

// Record is one request in progress.
type Record struct {
	ID        string // request id, returned in X-Request-Id
	Route     string // Route's name for the path
	Method    string // HTTP method
	Principal string // the authenticated caller, once known
	MCP       mcp.Note
	Received  int64 // request body bytes read through a counted reader
	path      string
	start     time.Time
	trace     *recordTrace // the request's spans, when tracing is on (trace.go)
}

// HeaderRequestID is the request id header, read and written.
const HeaderRequestID = "X-Request-Id"

// Begin opens the Record of a request; requestID is the client's
// X-Request-Id, kept when it is a plain token of at most 128 bytes.
func (t *Tracker) Begin(method, path, requestID string) *Record {
	if !validID(requestID) {
		requestID = t.nextID()
	}
	return &Record{ID: requestID, Route: Route(path), Method: method, path: path, start: time.Now()}
}

// nextID is a fresh request id, prefix-seq (base 36), in one allocation.
func (t *Tracker) nextID() string {
	var buf [64]byte
	b := append(buf[:0], t.prefix...)
	b = append(b, '-')
	return string(strconv.AppendUint(b, t.seq.Add(1), 36))
}

func validID(id string) bool {
	if id == "" || len(id) > 128 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.' || c == ':') {
			return false
		}
	}
	return true
}

// idKey is the context key of the request id.
type idKey struct{}

// IDKey is the key under which contexts carry the request's Record, and
// with it the request id (also as a fasthttp user value, which its
// RequestCtx.Value reads).
var IDKey any = idKey{}

// Context is a context carrying only the request id, for work that
// outlives the request (MCP calls, storage calls): never done, no
// deadline.
func (r *Record) Context() context.Context { return recordContext{r} }

// recordContext is a Record as a context's values, without an allocation.
type recordContext struct{ r *Record }

func (recordContext) Deadline() (time.Time, bool) { return time.Time{}, false }
func (recordContext) Done() <-chan struct{}       { return nil }
func (recordContext) Err() error                  { return nil }

func (c recordContext) Value(key any) any {
	if key == IDKey {
		return c.r
	}
	return nil
}

// Begin tells the Record that the MCP endpoint starts work under it
// (observe.Work): with tracing on, the MCP span starts then.
func (c recordContext) Begin() context.Context {
	if c.r.trace != nil {
		c.r.trace.begin(&c.r.MCP)
	}
	return c
}

// RequestID is the request id ctx carries, or "".
func RequestID(ctx context.Context) string {
	if ctx == nil {
		return ""
	}
	if r, ok := ctx.Value(IDKey).(*Record); ok {
		return r.ID
	}
	return ""
}

// End closes the Record: status is the response's, sent the response
// body's length (-1: unknown), received the request body's length when no
// counted reader read it.
func (t *Tracker) End(r *Record, status int, sent, received int64) {
	received = t.answered(r, status, received)
	t.finished(r, status, sent, received)
}

// answered records the response's start: the request, its duration so far,
// the MCP method, the request body and the upload. It returns the request
// body's length.
func (t *Tracker) answered(r *Record, status int, received int64) int64 {
	d := time.Since(r.start)
	if r.Received > 0 {
		received = r.Received
	}
	m := t.metrics
	m.Request(r.Route, r.Method, status, d)
	if r.MCP.Method != "" {
		m.MCP(r.MCP.Method, r.MCP.Era, r.MCP.Outcome)
	}
	m.Received(r.receivedPlane(), received)
	if surface, ok := r.uploadSurface(); ok {
		m.Upload(surface, uploadOutcome(status, r.MCP.Outcome))
	}
	return received
}

// finished records the response body's bytes and writes the access-log
// line, with the time since the request arrived: called once the body is
// sent (or failed), so both are what went out and when.
func (t *Tracker) finished(r *Record, status int, sent, received int64) {
	t.metrics.Sent(r.sentPlane(), sent)
	t.logRequest(r, status, sent, received, time.Since(r.start))
	if r.trace != nil {
		r.trace.end(r.MCP, status, sent, received)
	}
}

// logRequest writes the access-log line: at info with the access log on,
// else at debug; at debug it also names the path, with its tokens
// redacted.
func (t *Tracker) logRequest(r *Record, status int, sent, received int64, d time.Duration) {
	debug := t.log.Enabled(context.Background(), slog.LevelDebug)
	if !t.accessLog && !debug {
		return
	}
	level := slog.LevelDebug
	if t.accessLog {
		level = slog.LevelInfo
	}
	attrs := []slog.Attr{slog.String("request_id", r.ID), slog.String("route", r.Route), slog.String("method", r.Method),
		slog.Int("status", status), slog.Int64("bytes_out", sent), slog.Int64("bytes_in", max(received, 0)),
		slog.Duration("duration", d), slog.String("principal", r.Principal),
		slog.String("mcp_method", r.MCP.Method), slog.String("tool", r.MCP.Tool)}
	if r.trace != nil {
		attrs = append(attrs, slog.String("trace_id", r.trace.http.TraceID()))
	}
	if debug {
		attrs = append(attrs, slog.String("path", redact.Path(r.path)))
	}
	// The handler directly, as slog.Logger.LogAttrs would call it but
	// without the caller's program counter (runtime.Callers): the access
	// line has no source.
	h := t.log.Handler()
	if level == slog.LevelInfo && !debug && !h.Enabled(context.Background(), level) {
		return
	}
	rec := slog.NewRecord(time.Now(), level, "request", 0)
	rec.AddAttrs(attrs...)
	_ = h.Handle(context.Background(), rec)
}

// Download counts rc as a download stream in progress until it closes.
// The result unwraps to rc, so the sendfile path still finds the file.
func (t *Tracker) Download(rc io.ReadCloser) io.ReadCloser {
	return &counted{ReadCloser: rc, done: t.metrics.Open(metrics.StreamDownload)}
}

// Upload counts an upload body being stored until the returned func runs.
func (t *Tracker) Upload() func() { return t.metrics.Open(metrics.StreamUpload) }

type counted struct {
	io.ReadCloser
	done func()
}

func (c *counted) Unwrap() io.ReadCloser { return c.ReadCloser }

func (c *counted) Close() error {
	c.done()
	return c.ReadCloser.Close()
}
