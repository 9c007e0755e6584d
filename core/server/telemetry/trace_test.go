package telemetry

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/mcpblob/mcpblob/core/mcp/observe"
	"github.com/mcpblob/mcpblob/core/metrics"
)

// fakeTracer records what the hooks are asked, with contexts that name
// their span.
type fakeTracer struct {
	mcpStarts []TraceContext
	storage   []string // parent span name of each storage op
	mcpEnded  *fakeMCP
}

type spanName struct{}

type fakeSpan struct{ ctx context.Context }

func (s fakeSpan) Context() context.Context { return s.ctx }
func (fakeSpan) TraceID() string            { return "0123456789abcdef0123456789abcdef" }
func (fakeSpan) End(status int, _, _ int64) {}

type fakeMCP struct {
	fakeSpan
	late TraceContext
	note observe.Note
}

func (m *fakeMCP) End(n observe.Note, late TraceContext) { m.note, m.late = n, late }

func (f *fakeTracer) StartRequest(method, route, tp, ts string) Span {
	return fakeSpan{context.WithValue(context.Background(), spanName{}, "http")}
}

func (f *fakeTracer) StartMCP(parent context.Context, tc TraceContext, start time.Time) MCPSpan {
	f.mcpStarts = append(f.mcpStarts, tc)
	f.mcpEnded = &fakeMCP{fakeSpan: fakeSpan{context.WithValue(parent, spanName{}, "mcp")}}
	return f.mcpEnded
}

func (f *fakeTracer) StartUpstream(context.Context, http.Header) func(string) { return func(string) {} }

func (f *fakeTracer) StartDecode(context.Context) func(int64, bool) { return func(int64, bool) {} }

func (f *fakeTracer) Storage(parent context.Context, backend, op, outcome string, d time.Duration) {
	name, _ := parent.Value(spanName{}).(string)
	f.storage = append(f.storage, name)
}

var metaWithTrace = map[string]json.RawMessage{"traceparent": json.RawMessage(`"00-4bf92f3577b34da6a3ce929d0e0e4736-b7ad6b7169203331-01"`)}

// TestMCPSpanStart: work that begins before the method is known waits
// for it, so _meta's context can still be the parent; a child that needs
// its parent first starts the span (no _meta yet), and the _meta read
// later is handed over at the end, for a link.
func TestMCPSpanStart(t *testing.T) {
	tr := New(metrics.New(metrics.Build{}), slog.New(slog.DiscardHandler), false)
	f := &fakeTracer{}
	tr.SetTracer(f)

	rec := tr.Begin("POST", "/mcp", "")
	rec.trace = &recordTrace{tracer: f, http: f.StartRequest("POST", RouteMCP, "", "")}
	observe.WithValues(context.Background(), rec.Context()) // a file argument: method not yet known
	if len(f.mcpStarts) != 0 {
		t.Fatalf("the MCP span started before its method was known")
	}
	rec.MCP = observe.Note{Method: "tools/call", Tool: "upload_file", Meta: metaWithTrace}
	observe.WithValues(context.Background(), rec.Context()) // the call
	if len(f.mcpStarts) != 1 || f.mcpStarts[0].TraceParent == "" {
		t.Fatalf("MCP span starts %v, want one with _meta's traceparent", f.mcpStarts)
	}
	tr.End(rec, 200, 0, 0)
	if f.mcpEnded.late != (TraceContext{}) {
		t.Errorf("a _meta read in time was handed over as a late link: %v", f.mcpEnded.late)
	}

	f2 := &fakeTracer{}
	tr.SetTracer(f2)
	rec = tr.Begin("POST", "/mcp", "")
	rec.trace = &recordTrace{tracer: f2, http: f2.StartRequest("POST", RouteMCP, "", "")}
	work := observe.WithValues(context.Background(), rec.Context())
	f2.Storage(SpanParent(work), "localfs", "staged_put", "ok", time.Millisecond)
	rec.MCP = observe.Note{Method: "tools/call", Tool: "upload_file", Meta: metaWithTrace}
	observe.WithValues(context.Background(), rec.Context())
	f2.Storage(SpanParent(work), "localfs", "put", "ok", time.Millisecond)
	tr.End(rec, 200, 0, 0)
	if len(f2.mcpStarts) != 1 || f2.mcpStarts[0] != (TraceContext{}) {
		t.Errorf("MCP span starts %v, want one, without _meta (not yet read)", f2.mcpStarts)
	}
	if want := []string{"mcp", "mcp"}; len(f2.storage) != 2 || f2.storage[0] != want[0] || f2.storage[1] != want[1] {
		t.Errorf("storage spans' parents %v, want %v", f2.storage, want)
	}
	if f2.mcpEnded.late.TraceParent == "" || f2.mcpEnded.note.Tool != "upload_file" {
		t.Errorf("MCP span ended with %+v, late %+v: want the note and _meta's context as a late link", f2.mcpEnded.note, f2.mcpEnded.late)
	}
}

// TestTracingOffAllocatesNothing: without a Tracer, the request's context
// as the MCP endpoint uses it (work begins, values looked up) and the
// parent lookup of a storage span allocate nothing.
func TestTracingOffAllocatesNothing(t *testing.T) {
	tr := New(metrics.New(metrics.Build{}), slog.New(slog.DiscardHandler), false)
	rec := tr.Begin("POST", "/mcp", "")
	ctx := rec.Context()
	allocs := testing.AllocsPerRun(100, func() {
		if w, ok := ctx.(observe.Work); !ok || w.Begin() == nil || SpanParent(ctx) != nil || ctx.Value(spanName{}) != nil {
			t.Fatal("unexpected: the record's context is no Work, or a span parent without tracing")
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocations per request with tracing off, want 0", allocs)
	}
}
