package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
)

func runServe(ctx context.Context, args []string, getenv func(string) string) int {
	cfg, err := loadConfig(args, getenv, os.Stderr)
	if err != nil {
		fmt.Fprintf(os.Stderr, "mcpblob serve: %v\n", err)
		return exitUsage
	}
	logger := newLogger(cfg)
	logger.Error("serve: not wired yet", "listen", cfg.Listen)
	return exitFailed
}

func newLogger(cfg Config) *slog.Logger {
	var level slog.Level
	_ = level.UnmarshalText([]byte(cfg.LogLevel))
	opts := &slog.HandlerOptions{Level: level}
	if cfg.LogFormat == "json" {
		return slog.New(slog.NewJSONHandler(os.Stderr, opts))
	}
	return slog.New(slog.NewTextHandler(os.Stderr, opts))
}
