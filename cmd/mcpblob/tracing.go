package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/mcpblob/mcpblob/core/server/tracing"
)

// startTracing returns the OpenTelemetry provider the OTEL_* environment
// configures (nil: tracing off, the default) and the func that flushes
// and stops it at exit, within a few seconds.
func startTracing(ctx context.Context, logger *slog.Logger) (*tracing.Provider, func(), error) {
	tp, err := tracing.FromEnv(ctx, versionString(), logger)
	if err != nil || tp == nil {
		return nil, func() {}, err
	}
	logger.Info("serve: tracing on (OpenTelemetry, OTLP/HTTP)")
	return tp, func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := tp.Shutdown(ctx); err != nil {
			logger.Warn("serve: tracing: spans not exported at exit", "err", err)
		}
	}, nil
}
