package oauth

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-jose/go-jose/v4"
)

// ErrUnavailable is returned by [Verifier.Verify] when the JWKS has been
// stale for longer than [Config].MaxAge and cannot be fetched: the fault is
// the server's, not the token's (answer 503, not 401).
var ErrUnavailable = errors.New("oauth: signing keys unavailable")

// errRateLimited means a refresh was skipped because of MinRefresh.
var errRateLimited = errors.New("oauth: jwks refresh rate-limited")

// Verifier checks JWT access tokens issued by one authorization server for
// one audience. It is safe for concurrent use.
type Verifier struct {
	cfg  Config
	algs []jose.SignatureAlgorithm
	meta Metadata
	now  func() time.Time

	keys   atomic.Pointer[keySet]
	tokens tokenCache // verified tokens (tokencache.go)

	mu          sync.Mutex // guards lastAttempt and flight
	lastAttempt time.Time
	flight      *flight
}

// flight is one JWKS fetch that concurrent callers wait for.
type flight struct {
	done chan struct{}
	err  error
}

// New validates cfg, discovers the authorization server's metadata and
// fetches its JWKS once. It fails, naming what failed, when the config is
// invalid, no metadata location serves a document for cfg.Issuer, or the
// JWKS cannot be fetched or has no usable signing key.
func New(ctx context.Context, cfg Config) (*Verifier, error) {
	return newVerifier(ctx, cfg, time.Now)
}

func newVerifier(ctx context.Context, cfg Config, now func() time.Time) (*Verifier, error) {
	cfg, iss, algs, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	raw, loc, err := discover(ctx, cfg.HTTPClient, cfg.Issuer, iss)
	if err != nil {
		return nil, err
	}
	v := &Verifier{cfg: cfg, algs: algs, now: now, meta: raw.metadata(algs)}
	v.lastAttempt = now()
	if err := v.fetch(ctx); err != nil {
		return nil, err
	}
	cfg.Logger.Info("oauth: verifier ready", "issuer", cfg.Issuer, "metadata", loc,
		"jwks_uri", raw.JWKSURI, "keys", v.keys.Load().n, "audience", cfg.Audience)
	return v, nil
}

func (m rawMetadata) metadata(algs []jose.SignatureAlgorithm) Metadata {
	names := make([]string, len(algs))
	for i, a := range algs {
		names[i] = string(a)
	}
	return Metadata{
		Issuer:                m.Issuer,
		AuthorizationEndpoint: m.AuthorizationEndpoint,
		TokenEndpoint:         m.TokenEndpoint,
		JWKSURI:               m.JWKSURI,
		RegistrationEndpoint:  m.RegistrationEndpoint,
		ScopesSupported:       slices.Clone(m.ScopesSupported),
		CodeChallengeMethods:  slices.Clone(m.CodeChallengeMethods),
		SigningAlgs:           names,
	}
}

// Metadata returns the discovered authorization server metadata. The
// slices are copies.
func (v *Verifier) Metadata() Metadata {
	m := v.meta
	m.ScopesSupported = slices.Clone(m.ScopesSupported)
	m.CodeChallengeMethods = slices.Clone(m.CodeChallengeMethods)
	m.SigningAlgs = slices.Clone(m.SigningAlgs)
	return m
}

// fetch downloads and installs the JWKS.
func (v *Verifier) fetch(ctx context.Context) error {
	var body jsonBytes
	h, err := getJSON(ctx, v.cfg.HTTPClient, v.meta.JWKSURI, &body)
	if err != nil {
		return fmt.Errorf("oauth: fetch jwks %s: %w", v.meta.JWKSURI, err)
	}
	set, skipped, err := parseJWKS(body, v.algs)
	if err != nil {
		return fmt.Errorf("oauth: jwks %s: %w", v.meta.JWKSURI, err)
	}
	age := v.cfg.MaxAge
	if d, ok := cacheMaxAge(h); ok {
		age = max(min(d, age), v.cfg.MinRefresh)
	}
	set.fetched = v.now()
	set.expires = set.fetched.Add(age)
	v.keys.Store(set)
	v.cfg.Logger.Debug("oauth: jwks fetched", "keys", set.n, "skipped", skipped, "max_age", age)
	return nil
}

// jsonBytes keeps a JSON document's raw bytes (after getJSON checked it
// is JSON).
type jsonBytes []byte

func (b *jsonBytes) UnmarshalJSON(data []byte) error {
	*b = append((*b)[:0], data...)
	return nil
}

// refresh fetches the JWKS unless one was attempted less than MinRefresh
// ago (errRateLimited). Concurrent callers share one fetch; the fetch runs
// detached from ctx's cancellation so one caller leaving does not fail the
// others, and each caller stops waiting when its own ctx is done.
func (v *Verifier) refresh(ctx context.Context) error {
	v.mu.Lock()
	f := v.flight
	if f == nil {
		now := v.now()
		if now.Sub(v.lastAttempt) < v.cfg.MinRefresh {
			v.mu.Unlock()
			return errRateLimited
		}
		v.lastAttempt = now
		f = &flight{done: make(chan struct{})}
		v.flight = f
		go v.run(context.WithoutCancel(ctx), f)
	}
	v.mu.Unlock()
	select {
	case <-f.done:
		return f.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (v *Verifier) run(ctx context.Context, f *flight) {
	f.err = v.fetch(ctx)
	if f.err != nil {
		v.cfg.Logger.Warn("oauth: jwks refresh failed", "err", f.err)
	}
	v.mu.Lock()
	v.flight = nil
	v.mu.Unlock()
	close(f.done)
}

// current returns a key set that is fresh, refreshing a stale one first. A
// stale set is still used when the refresh fails or is rate-limited, for at
// most MaxAge past its expiry; after that Verify fails with ErrUnavailable.
func (v *Verifier) current(ctx context.Context) (*keySet, error) {
	set := v.keys.Load()
	if v.now().Before(set.expires) {
		return set, nil
	}
	if err := v.refresh(ctx); err != nil && ctx.Err() != nil {
		return nil, fmt.Errorf("oauth: verify: %w", ctx.Err())
	}
	set = v.keys.Load()
	if v.now().After(set.expires.Add(v.cfg.MaxAge)) {
		return nil, ErrUnavailable
	}
	return set, nil
}
