package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/mcpblob/mcpblob/core/auth"
	"github.com/mcpblob/mcpblob/core/blobs"
	"github.com/mcpblob/mcpblob/core/codec"
	"github.com/mcpblob/mcpblob/core/conformance"
	"github.com/mcpblob/mcpblob/core/mcp"
	"github.com/mcpblob/mcpblob/core/server"
	"github.com/mcpblob/mcpblob/core/server/blobsvc"
	"github.com/mcpblob/mcpblob/core/server/front"
	"github.com/mcpblob/mcpblob/core/server/gate"
	"github.com/mcpblob/mcpblob/core/server/redact"
	"github.com/mcpblob/mcpblob/core/server/telemetry/logbuf"
	"github.com/mcpblob/mcpblob/storage"
	"github.com/mcpblob/mcpblob/storage/lifecycle"
	"github.com/mcpblob/mcpblob/storage/localfs"
	"github.com/mcpblob/mcpblob/storage/s3"
)

func runServe(ctx context.Context, args []string, getenv func(string) string) int {
	cfg, err := loadConfig(args, getenv, os.Stderr)
	if err != nil {
		if !errors.Is(err, errHelp) {
			fmt.Fprintf(os.Stderr, "mcpblob serve: %v\n", err)
		}
		return exitUsage
	}
	logger, logs := newLogger(cfg)
	defer logs.Flush() // the last buffered access-log lines, at every exit
	if err := serve(ctx, cfg, logger); err != nil {
		logger.Error("serve: stopped", "err", err)
		return exitFailed
	}
	return exitOK
}

// serve runs the server until ctx is cancelled, then shuts down gracefully:
// readiness off, drain delay, grace period, then the backend is closed.
func serve(ctx context.Context, cfg Config, logger *slog.Logger) error {
	backend, desc, err := openBackend(ctx, cfg, logger)
	if err != nil {
		return err
	}
	defer backend.Close()
	keyring, err := loadKeyring(cfg, logger)
	if err != nil {
		return err
	}
	verifier, err := oauthVerifier(ctx, cfg, logger)
	if err != nil {
		return err
	}
	tp, stopTracing, err := startTracing(ctx, logger)
	if err != nil {
		return err
	}
	defer stopTracing()
	srv, err := server.New(server.Options{
		Backend:     backend,
		Keyring:     keyring,
		Logger:      logger,
		Version:     versionString(),
		Extend:      extensions(cfg),
		PublicURL:   cfg.PublicURL,
		DownloadURL: cfg.DownloadURL,
		Auth: server.Auth{
			KeysFile:    cfg.AuthKeys,
			OAuth:       tokenVerifier(verifier),
			OAuthIssuer: cfg.OAuthIssuer,
			Tenancy:     cfg.Tenancy,
		},
		Front: frontOptions(cfg),
		Limits: gate.Limits{
			MaxUploads:             cfg.MaxUploads,
			MaxUploadsPerPrincipal: cfg.MaxUploadsPerPrincipal,
			BodyMinRate:            bodyMinRate(cfg.BodyMinRate),
			BodyGrace:              cfg.BodyGrace,
		},
		Service: blobsvc.Options{
			LinksNeedCredential: cfg.LinkAuth,
			DownloadRedirect:    cfg.DownloadRedirect,
			MaxUploadBytes:      cfg.MaxUpload,
			OAuthLogin:          oauthLogin(cfg, verifier),
		},
		MCP:       mcp.Options{Limits: noBoundAtZero(cfg.ProtocolLimits)},
		Blobs:     blobs.Options{StreamMode: cfg.StreamMode},
		Gateway:   gatewayOptions(cfg),
		Tracing:   tp,
		Quota:     quotaOptions(cfg),
		Lifecycle: lifecycleOptions(cfg),
	})
	if err != nil {
		return err
	}
	logger.Info("mcpblob starting",
		"version", versionString(), "listen", cfg.Listen, "store", desc,
		"base64_tier", codec.Tier(), "public_url", cfg.PublicURL, "download_url", cfg.DownloadURL,
		"auth_keys", cfg.AuthKeys != "", "oauth_issuer", cfg.OAuthIssuer, "tenancy", cfg.Tenancy, "conformance_fixtures", cfg.ConformanceFixtures,
		"stream_mode", streamModeName(cfg, backend), "download_redirect", cfg.DownloadRedirect,
		"max_conns", cfg.MaxConns, "max_conns_per_ip", cfg.MaxConnsPerIP, "max_uploads", cfg.MaxUploads,
		"max_uploads_per_principal", cfg.MaxUploadsPerPrincipal, "body_min_rate", cfg.BodyMinRate, "body_grace", cfg.BodyGrace,
		"upstream", redactedUpstream(cfg.Upstream), "upstream_token", cfg.UpstreamToken != "", "upstream_principal", cfg.UpstreamPrincipal)

	if err := runUntilDone(ctx, srv, logger); err != nil {
		return err
	}
	logger.Info("mcpblob shutting down")
	if err := srv.Shutdown(context.Background()); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	return nil
}

// runUntilDone serves until ctx is cancelled (nil) or the server fails.
// SIGHUP reloads the API keys (--auth-keys): a key no longer in the file
// is refused from its next request and its notification streams end.
func runUntilDone(ctx context.Context, srv *server.Server, logger *slog.Logger) error {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	errc := make(chan error, 1)
	go func() { errc <- srv.ListenAndServe() }()
	for {
		select {
		case err := <-errc:
			return err
		case <-ctx.Done():
			return nil
		case <-hup:
			if n, err := srv.ReloadKeys(); err != nil {
				logger.Error("serve: API keys not reloaded; the keys in use are unchanged", "err", err)
			} else {
				logger.Info("serve: API keys reloaded", "keys", n)
			}
		}
	}
}

// bodyMinRate maps --body-min-rate to server.Options.BodyMinRate, where 0
// is the default and a negative rate turns the rule off.
func bodyMinRate(flag int64) int64 {
	if flag == 0 {
		return -1
	}
	return flag
}

// openBackend opens the store the configuration names and describes it for the start-up log.
func openBackend(ctx context.Context, cfg Config, logger *slog.Logger) (storage.Backend, string, error) {
	if cfg.S3Endpoint != "" {
		st, err := s3.Open(ctx, s3.Options{
			Endpoint:     cfg.S3Endpoint,
			Bucket:       cfg.S3Bucket,
			Region:       cfg.S3Region,
			AccessKey:    cfg.S3AccessKey,
			SecretKey:    cfg.S3SecretKey,
			CreateBucket: true,
			Logger:       logger,
		})
		if err != nil {
			return nil, "", err
		}
		return st, "s3:" + cfg.S3Endpoint + "/" + cfg.S3Bucket, nil
	}
	st, err := localfs.Open(cfg.Data, localfs.Options{Logger: logger})
	if err != nil {
		return nil, "", err
	}
	return st, "localfs:" + cfg.Data, nil
}

// Log lines are batched (package logbuf): written out every
// logFlushInterval, when logBufferSize bytes are waiting, at once for a
// warning or an error, and at exit. One write(2) per access-log line was
// a measurable share of a small request's CPU cost (bench/profiles/p6-*).
const (
	logBufferSize    = 64 << 10
	logFlushInterval = 100 * time.Millisecond
)

// newLogger returns the server's logger and the buffer behind it, which
// the caller flushes at exit.
func newLogger(cfg Config) (*slog.Logger, *logbuf.Writer) {
	var level slog.Level
	_ = level.UnmarshalText([]byte(cfg.LogLevel))
	opts := &slog.HandlerOptions{Level: level}
	out := logbuf.New(os.Stderr, logBufferSize, logFlushInterval)
	h := logbuf.TextHandler(out, opts)
	if cfg.LogFormat == "json" {
		h = slog.NewJSONHandler(out, opts)
	}
	// Redacted at the root, so the storage backends' lines are too.
	return slog.New(redact.NewHandler(logbuf.Handler(h, out))), out
}

// streamModeName is the resources/stream mode in effect (for the start log).
func streamModeName(cfg Config, backend storage.Backend) string {
	_, presigns := backend.(storage.Presigner)
	switch {
	case cfg.StreamMode == "redirect" && !presigns:
		return "direct (the store cannot presign)"
	case cfg.StreamMode != "":
		return cfg.StreamMode
	case presigns:
		return "redirect"
	}
	return "direct"
}

// extensions are the MCP tools, resources and prompts added to the blob
// application's: the conformance suite's fixtures when asked for.
func extensions(cfg Config) func(*mcp.Server) {
	if !cfg.ConformanceFixtures {
		return nil
	}
	return conformance.Register
}

// frontOptions are the HTTP front's settings from cfg.
func frontOptions(cfg Config) front.Options {
	return front.Options{
		Listen:        cfg.Listen,
		ShutdownDelay: cfg.ShutdownDelay,
		GracePeriod:   cfg.GracePeriod,
		AccessLog:     cfg.AccessLog,
		MaxConns:      cfg.MaxConns,
		MaxConnsPerIP: cfg.MaxConnsPerIP,
		Admin:         front.Admin{Listen: cfg.AdminListen, Hosts: adminHosts(cfg.AdminHosts), Token: cfg.AdminToken},
	}
}

// quotaOptions are the quota settings from cfg.
func quotaOptions(cfg Config) server.Quota {
	return server.Quota{Default: auth.Quota{Bytes: int64(cfg.QuotaBytes), Objects: cfg.QuotaObjects},
		File: cfg.QuotaFile, Claims: cfg.OAuthQuotaClaim != "", HoldTTL: cfg.QuotaHoldTTL}
}

// lifecycleOptions are the expiry rules and the sweeper's round; the
// rules passed Config.Validate.
func lifecycleOptions(cfg Config) server.Lifecycle {
	rules, _ := lifecycle.ParseRules(cfg.Lifecycle)
	return server.Lifecycle{Rules: rules, SweepEvery: cfg.LifecycleSweepEvery}
}
