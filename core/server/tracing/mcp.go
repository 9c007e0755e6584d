package tracing

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpblob/mcpblob/core/mcp/observe"
	"github.com/mcpblob/mcpblob/core/server/telemetry"
)

// Attribute keys of the MCP span: the Mcp-Method and Mcp-Name values (the
// method, one the server offers or "other"; the tool a tools/call found),
// the protocol era and the outcome.
const (
	attrMCPMethod = "mcp.method.name"
	attrMCPName   = "mcp.name"
	attrMCPEra    = "mcp.protocol.version"
)

// StartMCP starts an MCP request's span, a child of tc (params._meta)
// when valid, else of parent's span. It is named when it ends, from the
// request's Note ("tools/call upload_file"): the method may not be known
// yet when a file argument streams ahead of the rest of the message.
func (p *Provider) StartMCP(parent context.Context, tc telemetry.TraceContext, start time.Time) telemetry.MCPSpan {
	ctx := p.remote(parent, carrier{tc.TraceParent, tc.TraceState, tc.Baggage})
	ctx, span := p.tracer.Start(ctx, "mcp", trace.WithSpanKind(trace.SpanKindServer), trace.WithTimestamp(start))
	return &mcpSpan{p: p, ctx: ctx, span: span}
}

type mcpSpan struct {
	p    *Provider
	ctx  context.Context
	span trace.Span
}

func (s *mcpSpan) Context() context.Context { return s.ctx }

func (s *mcpSpan) End(n observe.Note, late telemetry.TraceContext) {
	if n.Method != "" {
		name := n.Method
		attrs := []attribute.KeyValue{attribute.String(attrMCPMethod, n.Method), attribute.String(attrMCPEra, n.Era),
			attribute.String(attrOutcome, n.Outcome)}
		if n.Tool != "" {
			name += " " + n.Tool
			attrs = append(attrs, attribute.String(attrMCPName, n.Tool))
		}
		s.span.SetName(name)
		s.span.SetAttributes(attrs...)
	}
	if n.Outcome == observe.OutcomeError {
		s.span.SetStatus(codes.Error, "")
	}
	if sc := trace.SpanContextFromContext(s.p.remote(context.Background(), carrier{late.TraceParent, late.TraceState, ""})); sc.IsValid() {
		s.span.AddLink(trace.Link{SpanContext: sc, Attributes: []attribute.KeyValue{attribute.String("mcp.link", "params._meta")}})
	}
	s.span.End()
}
