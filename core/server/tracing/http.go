package tracing

import (
	"context"
	"net/http"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpblob/mcpblob/core/server/telemetry"
)

var _ telemetry.Tracer = (*Provider)(nil)

// Attribute keys of the spans (docs/tracing.md).
const (
	attrHTTPMethod    = "http.request.method"
	attrHTTPRoute     = "http.route"
	attrHTTPStatus    = "http.response.status_code"
	attrBytesOut      = "mcpblob.bytes_out"
	attrBytesIn       = "mcpblob.bytes_in"
	attrBytesDecoded  = "mcpblob.bytes_decoded"
	attrStorageSystem = "mcpblob.storage.backend"
	attrStorageOp     = "mcpblob.storage.operation"
	attrOutcome       = "mcpblob.outcome"
)

// StartRequest starts an HTTP request's server span, named after its
// method and route name ("POST mcp"): never the path, which can carry a
// blob key or a token.
func (p *Provider) StartRequest(method, route, traceparent, tracestate string) telemetry.Span {
	ctx := p.remote(context.Background(), carrier{traceparent: traceparent, tracestate: tracestate})
	ctx, span := p.tracer.Start(ctx, method+" "+route, trace.WithSpanKind(trace.SpanKindServer),
		trace.WithAttributes(attribute.String(attrHTTPMethod, method), attribute.String(attrHTTPRoute, route)))
	return &httpSpan{ctx: ctx, span: span}
}

type httpSpan struct {
	ctx  context.Context
	span trace.Span
}

func (s *httpSpan) Context() context.Context { return s.ctx }
func (s *httpSpan) TraceID() string          { return s.span.SpanContext().TraceID().String() }

func (s *httpSpan) End(status int, sent, received int64) {
	s.span.SetAttributes(attribute.Int(attrHTTPStatus, status), attribute.Int64(attrBytesOut, sent),
		attribute.Int64(attrBytesIn, max(received, 0)))
	if status >= 500 {
		s.span.SetStatus(codes.Error, "")
	}
	s.span.End()
}

// Storage records a storage operation ("storage put"), a client span under
// the span ctx carries.
func (p *Provider) Storage(ctx context.Context, backend, op, outcome string, d time.Duration) {
	p.retro(ctx, "storage "+op, d, outcome == "error", attribute.String(attrStorageSystem, backend),
		attribute.String(attrStorageOp, op), attribute.String(attrOutcome, outcome))
}

// StartUpstream starts the gateway's upstream call ("mcp upstream"), a
// client span under parent, and sets header's traceparent (and
// tracestate, baggage) to it, replacing the client's.
func (p *Provider) StartUpstream(parent context.Context, header http.Header) func(outcome string) {
	ctx, span := p.tracer.Start(parent, "mcp upstream", trace.WithSpanKind(trace.SpanKindClient))
	p.prop.Inject(ctx, propagation.HeaderCarrier(header))
	return func(outcome string) {
		span.SetAttributes(attribute.String(attrOutcome, outcome))
		if outcome != "ok" {
			span.SetStatus(codes.Error, "")
		}
		span.End()
	}
}

// StartDecode starts a large base64 decode ("decode base64"), an internal
// span under parent ended with the bytes decoded (mcpblob.bytes_decoded).
func (p *Provider) StartDecode(parent context.Context) func(decoded int64, failed bool) {
	_, span := p.tracer.Start(parent, "decode base64")
	return func(decoded int64, failed bool) {
		span.SetAttributes(attribute.Int64(attrBytesDecoded, decoded))
		if failed {
			span.SetStatus(codes.Error, "")
		}
		span.End()
	}
}
