package tracing_test

import (
	"testing"

	"github.com/mcpblob/mcpblob/core/server/tracing"
)

// TestEnabled: off by default; on with OTEL_TRACES_EXPORTER=otlp or an
// OTLP endpoint; off with none or OTEL_SDK_DISABLED; another exporter or
// protocol is an error, not a silent off.
func TestEnabled(t *testing.T) {
	vars := []string{"OTEL_SDK_DISABLED", "OTEL_TRACES_EXPORTER", "OTEL_EXPORTER_OTLP_ENDPOINT",
		"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"}
	for _, tc := range []struct {
		name    string
		env     map[string]string
		on, bad bool
	}{
		{"nothing set", nil, false, false},
		{"otlp", map[string]string{"OTEL_TRACES_EXPORTER": "otlp"}, true, false},
		{"endpoint", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}, true, false},
		{"traces endpoint", map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:4318/v1/traces"}, true, false},
		{"none wins over an endpoint", map[string]string{"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}, false, false},
		{"sdk disabled", map[string]string{"OTEL_SDK_DISABLED": "true", "OTEL_TRACES_EXPORTER": "otlp"}, false, false},
		{"other exporter", map[string]string{"OTEL_TRACES_EXPORTER": "zipkin"}, false, true},
		{"grpc", map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, false, true},
		{"traces protocol wins", map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc",
			"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/protobuf"}, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, v := range vars {
				t.Setenv(v, tc.env[v])
			}
			on, err := tracing.Enabled()
			if on != tc.on || (err != nil) != tc.bad {
				t.Errorf("Enabled() = %v, %v; want %v, error %v", on, err, tc.on, tc.bad)
			}
		})
	}
}
