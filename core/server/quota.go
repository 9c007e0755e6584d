package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/mcpblob/mcpblob/core/auth"
	"github.com/mcpblob/mcpblob/core/server/blobsvc"
	"github.com/mcpblob/mcpblob/core/server/front"
	"github.com/mcpblob/mcpblob/core/server/gate"
	"github.com/mcpblob/mcpblob/core/server/usage"
	"github.com/mcpblob/mcpblob/core/tenancy"
	"github.com/mcpblob/mcpblob/storage"
	"github.com/mcpblob/mcpblob/storage/quota"
)

// Quota configures per-principal quotas (package storage/quota;
// docs/quotas.md). Quotas are on when any field is set or a key line
// names a quota; they need principal tenancy.
type Quota struct {
	// Default is every principal's quota unless its key line, token or
	// File says otherwise; a zero field is no quota of that kind.
	Default auth.Quota
	// File names the operator's quota file (auth.LoadQuotas), read again
	// by ReloadKeys; its lines win over key lines and tokens.
	File string
	// Claims says that tokens carry quotas (the verifier reads a claim):
	// usage is counted even when nothing else sets a quota.
	Claims bool
	// HoldTTL is how long an upload's reservation lives without renewal
	// (quota.DefaultHoldTTL when zero).
	HoldTTL time.Duration
}

// quotas is the server's quota state: nil when quotas are off.
type quotas struct {
	table  *quota.Table
	ledger *quota.Ledger
}

// setUpQuota wraps opts.Backend so every write into a namespace is
// counted (after the storage metrics' wrapper, so its record operations
// are measured too), when quotas are on.
func setUpQuota(opts *Options) (*quotas, error) {
	keys, err := auth.LoadKeys(opts.Auth.KeysFile, opts.Auth.Keys)
	if err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}
	q := opts.Quota
	if q.Default.IsZero() && q.File == "" && !q.Claims && len(keys.Quotas()) == 0 {
		return nil, nil
	}
	rec := storage.RecorderOf(opts.Backend)
	if rec == nil {
		return nil, errors.New("server: quotas need a store that keeps records (the local store and S3 do)")
	}
	s := &quotas{table: quota.NewTable(limitOf(q.Default))}
	if err := s.load(q.File, keys); err != nil {
		return nil, err
	}
	m := opts.Metrics
	s.ledger = &quota.Ledger{Records: rec, Limits: s.table, HoldTTL: q.HoldTTL,
		Changed: m.QuotaCharged, Refused: m.QuotaRefused}
	opts.Backend = quota.Wrap(opts.Backend, s.ledger)
	return s, nil
}

// load makes the key lines' quotas and the quota file's (which win) the
// operator's quotas.
func (s *quotas) load(file string, keys *auth.Keys) error {
	set := map[string]quota.Limit{}
	for p, q := range keys.Quotas() {
		set[p] = limitOf(q)
	}
	if file != "" {
		fromFile, err := auth.LoadQuotas(file)
		if err != nil {
			return fmt.Errorf("server: %w", err)
		}
		for p, q := range fromFile {
			set[p] = limitOf(q)
		}
	}
	s.table.Replace(set)
	return nil
}

func limitOf(q auth.Quota) quota.Limit { return quota.Limit{Bytes: q.Bytes, Objects: q.Objects} }

// checkQuotaTenancy refuses quotas without principal tenancy: usage is
// counted per namespace.
func (s *Server) checkQuotaTenancy() error {
	if s.quotas != nil && s.gate.Tenancy.Mode != tenancy.Principal {
		return errors.New("server: quotas count per principal namespace: they need principal tenancy")
	}
	return nil
}

// claimQuota remembers the quota an OAuth token named for its principal.
func (s *quotas) claimQuota(id auth.Identity) {
	if s != nil && id.Method == "oauth" {
		s.table.Claim(id.Principal, limitOf(id.Quota))
	}
}

// usage is GET /v1/usage's answer for principal.
func (s *quotas) usage(ctx context.Context, principal string) (any, error) {
	u, err := s.ledger.PrincipalUsage(ctx, principal)
	if err != nil {
		return nil, err
	}
	return map[string]any{"principal": principal, "bytes": u.Bytes, "objects": u.Objects,
		"inFlightBytes": u.HeldBytes, "inFlightObjects": u.HeldObjects,
		"limit": map[string]int64{"bytes": u.Limit.Bytes, "objects": u.Limit.Objects}}, nil
}

// service is the blob service with GET /v1/usage in front of it, when
// quotas are on.
func (s *quotas) service(svc *blobsvc.Server, g *gate.Gate, log *slog.Logger) front.Service {
	if s == nil {
		return svc
	}
	return &usage.Service{Inner: svc, Gate: g, Log: log, Usage: s.usage}
}
