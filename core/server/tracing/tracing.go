package tracing

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// Provider makes mcpblob's spans and exports them. Safe for concurrent
// use.
type Provider struct {
	tp     *sdktrace.TracerProvider
	tracer trace.Tracer
	prop   propagation.TextMapPropagator
}

// Enabled reports whether the environment turns tracing on: not with
// OTEL_SDK_DISABLED=true; with OTEL_TRACES_EXPORTER=otlp; and, that
// variable unset, when OTEL_EXPORTER_OTLP_ENDPOINT or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set. Any other exporter name but
// "none" is an error: OTLP/HTTP is the only one built in.
func Enabled() (bool, error) {
	if strings.EqualFold(os.Getenv("OTEL_SDK_DISABLED"), "true") {
		return false, nil
	}
	exporter := strings.TrimSpace(os.Getenv("OTEL_TRACES_EXPORTER"))
	switch exporter {
	case "otlp":
	case "none":
		return false, nil
	case "":
		if os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") == "" && os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") == "" {
			return false, nil
		}
	default:
		return false, fmt.Errorf("tracing: OTEL_TRACES_EXPORTER=%q: only otlp (or none) is supported", exporter)
	}
	for _, name := range []string{"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"} {
		if p := os.Getenv(name); p != "" && p != "http/protobuf" {
			return false, fmt.Errorf("tracing: %s=%q: only http/protobuf is supported", name, p)
		}
		if os.Getenv(name) != "" {
			break
		}
	}
	return true, nil
}

// FromEnv returns the Provider the OTEL_* environment configures, or nil
// when it leaves tracing off (Enabled). The exporter (OTLP/HTTP: endpoint,
// headers, timeout), the sampler (OTEL_TRACES_SAMPLER, default
// parentbased_always_on), the batch processor (OTEL_BSP_*) and the
// resource (OTEL_SERVICE_NAME, default "mcpblob"; OTEL_RESOURCE_ATTRIBUTES)
// read their variables as the SDK defines them. The SDK's own errors (an
// export that failed) go to log at warn, not to the standard logger.
func FromEnv(ctx context.Context, version string, log *slog.Logger) (*Provider, error) {
	on, err := Enabled()
	if err != nil || !on {
		return nil, err
	}
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) {
		log.Warn("tracing: OpenTelemetry error (spans may be lost)", "err", err)
	}))
	exp, err := otlptracehttp.New(ctx)
	if err != nil {
		return nil, fmt.Errorf("tracing: OTLP exporter: %w", err)
	}
	res, err := resource.New(ctx, resource.WithAttributes(attribute.String("service.name", "mcpblob"),
		attribute.String("service.version", version)), resource.WithFromEnv(), resource.WithTelemetrySDK())
	if err != nil && res == nil {
		return nil, fmt.Errorf("tracing: resource: %w", err)
	}
	return New(sdktrace.WithBatcher(exp), sdktrace.WithResource(res)), nil
}

// New returns a Provider over an SDK tracer provider made with opts (an
// exporter or a span processor; tests and benchmarks give their own).
func New(opts ...sdktrace.TracerProviderOption) *Provider {
	tp := sdktrace.NewTracerProvider(opts...)
	return &Provider{tp: tp, tracer: tp.Tracer("github.com/mcpblob/mcpblob"),
		prop: propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})}
}

// Shutdown exports the spans still queued and stops the exporter.
func (p *Provider) Shutdown(ctx context.Context) error {
	if p == nil {
		return nil
	}
	return p.tp.Shutdown(ctx)
}

// ForceFlush exports the spans queued so far.
func (p *Provider) ForceFlush(ctx context.Context) error { return p.tp.ForceFlush(ctx) }

// carrier is a W3C trace context as a propagation.TextMapCarrier, read
// only.
type carrier struct{ traceparent, tracestate, baggage string }

func (c carrier) Get(key string) string {
	switch key {
	case "traceparent":
		return c.traceparent
	case "tracestate":
		return c.tracestate
	case "baggage":
		return c.baggage
	}
	return ""
}

func (carrier) Set(string, string) {}
func (carrier) Keys() []string     { return []string{"traceparent", "tracestate", "baggage"} }

// remote is ctx with the trace context of c when c's traceparent is
// valid (then its baggage too), else ctx unchanged.
func (p *Provider) remote(ctx context.Context, c carrier) context.Context {
	if c.traceparent == "" {
		return ctx
	}
	if !trace.SpanContextFromContext(p.prop.Extract(context.Background(), c)).IsValid() {
		return ctx
	}
	return p.prop.Extract(ctx, c)
}

// retro records a span that started d ago and has just ended, under the
// span ctx carries; without one (nil: outside a traced request, such as
// the sweeper's work) it records nothing.
func (p *Provider) retro(ctx context.Context, name string, d time.Duration, failed bool, attrs ...attribute.KeyValue) {
	if ctx == nil || !trace.SpanContextFromContext(ctx).IsValid() {
		return
	}
	end := time.Now()
	_, span := p.tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindClient),
		trace.WithTimestamp(end.Add(-d)), trace.WithAttributes(attrs...))
	if failed {
		span.SetStatus(codes.Error, "")
	}
	span.End(trace.WithTimestamp(end))
}
