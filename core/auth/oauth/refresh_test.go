package oauth

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"testing"
	"time"
)

// reasonOf returns the TokenError reason of err, "" for nil, or fails.
func reasonOf(t *testing.T, err error) string {
	t.Helper()
	if err == nil {
		return ""
	}
	te, ok := errors.AsType[*TokenError](err)
	if !ok || !errors.Is(err, ErrInvalidToken) {
		t.Fatalf("error %v is not a TokenError", err)
	}
	return te.Reason
}

func expect(t *testing.T, v *Verifier, tok, reason string, as *fakeAS, hits int32) {
	t.Helper()
	_, err := v.Verify(context.Background(), tok)
	if got := reasonOf(t, err); got != reason {
		t.Fatalf("reason = %q, want %q", got, reason)
	}
	if got := as.jwksHits.Load(); got != hits {
		t.Fatalf("JWKS fetches = %d, want %d", got, hits)
	}
}

func TestUnknownKidRefreshIsRateLimited(t *testing.T) {
	keys(t)
	as := newFakeAS(t, "/t", keyRSA.jwk(true))
	clk := &clock{t: epoch}
	v := verifier(t, as, clk, nil)
	ec := sign(t, keyEC256, "", false, goodClaims(as), nil)
	ghost := sign(t, testKey{"ghost", keyEvil.alg, keyEvil.priv}, "", false, goodClaims(as), nil)

	expect(t, v, ec, "unknown signing key", as, 1) // New fetched just now
	as.setKeys(keyRSA.jwk(true), keyEC256.jwk(true))
	clk.advance(DefaultMinRefresh)
	expect(t, v, ec, "", as, 2)                       // unknown kid → refresh → found
	expect(t, v, ghost, "unknown signing key", as, 2) // rate-limited
	clk.advance(DefaultMinRefresh - time.Second)
	expect(t, v, ghost, "unknown signing key", as, 2)
	clk.advance(time.Second)
	expect(t, v, ghost, "unknown signing key", as, 3) // one refresh, still unknown
	expect(t, v, ghost, "unknown signing key", as, 3)
	expect(t, v, ec, "", as, 3)
}

func TestRotationAfterMaxAge(t *testing.T) {
	keys(t)
	as := newFakeAS(t, "", keyRSA.jwk(true), keyEC256.jwk(true))
	clk := &clock{t: epoch}
	v := verifier(t, as, clk, nil)
	old := sign(t, keyRSA, "", false, goodClaims(as), nil)
	cur := sign(t, keyEC256, "", false, goodClaims(as), nil)

	expect(t, v, old, "", as, 1)
	as.setKeys(keyEC256.jwk(true)) // the AS retires rsa-1
	clk.advance(DefaultMaxAge - time.Second)
	expect(t, v, old, "", as, 1) // cached JWKS still fresh
	clk.advance(time.Second)
	expect(t, v, old, "unknown signing key", as, 2) // stale → refetched → gone
	expect(t, v, cur, "", as, 2)
}

func TestCacheControlMaxAge(t *testing.T) {
	keys(t)
	for _, tc := range []struct {
		header    string
		fresh     time.Duration // still no refetch at this age
		refetched time.Duration // refetched at this age
	}{
		{"", DefaultMaxAge - time.Second, DefaultMaxAge},
		{"public, max-age=60", 59 * time.Second, 60 * time.Second},
		{"max-age=5", DefaultMinRefresh - time.Second, DefaultMinRefresh}, // not below MinRefresh
		{"no-store", DefaultMinRefresh - time.Second, DefaultMinRefresh},
		{"max-age=86400", DefaultMaxAge - time.Second, DefaultMaxAge}, // longer never wins
	} {
		t.Run(tc.header, func(t *testing.T) {
			as := newFakeAS(t, "", keyRSA.jwk(true))
			as.set(func(as *fakeAS) { as.cacheControl = tc.header })
			clk := &clock{t: epoch}
			v := verifier(t, as, clk, nil)
			tok := sign(t, keyRSA, "", false, goodClaims(as), nil)
			clk.advance(tc.fresh)
			expect(t, v, tok, "", as, 1)
			clk.advance(tc.refetched - tc.fresh)
			expect(t, v, tok, "", as, 2)
		})
	}
}

func TestRefreshFailureGrace(t *testing.T) {
	keys(t)
	as := newFakeAS(t, "", keyRSA.jwk(true))
	clk := &clock{t: epoch}
	v := verifier(t, as, clk, nil)
	tok := sign(t, keyRSA, "", false, goodClaims(as), nil)
	as.set(func(as *fakeAS) { as.override["/jwks"] = "{" })

	clk.advance(DefaultMaxAge)
	if _, err := v.Verify(context.Background(), tok); err != nil {
		t.Fatalf("within grace: %v", err)
	}
	clk.advance(DefaultMaxAge)
	if _, err := v.Verify(context.Background(), tok); err != nil {
		t.Fatalf("at the end of grace: %v", err)
	}
	clk.advance(time.Second)
	_, err := v.Verify(context.Background(), tok)
	if !errors.Is(err, ErrUnavailable) || errors.Is(err, ErrInvalidToken) {
		t.Fatalf("after grace: %v, want ErrUnavailable", err)
	}
	as.set(func(as *fakeAS) { delete(as.override, "/jwks") })
	clk.advance(DefaultMinRefresh)
	if _, err := v.Verify(context.Background(), tok); err != nil {
		t.Fatalf("after the AS recovered: %v", err)
	}
}

// TestHotPathNoNetwork verifies with the AS gone: a fresh JWKS and a known
// kid need no I/O.
func TestHotPathNoNetwork(t *testing.T) {
	keys(t)
	as := newFakeAS(t, "", keyRSA.jwk(true))
	v := verifier(t, as, &clock{t: epoch}, nil)
	tok := sign(t, keyRSA, "", false, goodClaims(as), nil)
	as.srv.Close()
	for range 3 {
		if _, err := v.Verify(context.Background(), tok); err != nil {
			t.Fatal(err)
		}
	}
}

// TestConcurrentVerify runs verifications and unknown-kid misses at once
// (run with -race): the misses share one JWKS fetch and all succeed.
func TestConcurrentVerify(t *testing.T) {
	keys(t)
	as := newFakeAS(t, "", keyRSA.jwk(true))
	clk := &clock{t: epoch}
	v := verifier(t, as, clk, nil)
	known := sign(t, keyRSA, "", false, goodClaims(as), nil)
	added := sign(t, keyEd, "", false, goodClaims(as), nil)
	as.setKeys(keyRSA.jwk(true), keyEd.jwk(true))
	as.set(func(as *fakeAS) { as.delay = 50 * time.Millisecond })
	clk.advance(DefaultMinRefresh)

	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for i := range 64 {
		tok := known
		if i%2 == 0 {
			tok = added
		}
		wg.Go(func() {
			if _, err := v.Verify(context.Background(), tok); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if got := as.jwksHits.Load(); got != 2 {
		t.Fatalf("JWKS fetches = %d, want 2 (one at New, one shared refresh)", got)
	}
}

// TestVerifyContextCancelled checks that a caller whose context ends while
// waiting for a refresh gets the context error, not a refusal, and that the
// refresh still completes for others.
func TestVerifyContextCancelled(t *testing.T) {
	keys(t)
	as := newFakeAS(t, "", keyRSA.jwk(true))
	clk := &clock{t: epoch}
	v := verifier(t, as, clk, nil)
	added := sign(t, keyEd, "", false, goodClaims(as), nil)
	as.setKeys(keyRSA.jwk(true), keyEd.jwk(true))
	as.set(func(as *fakeAS) { as.delay = 200 * time.Millisecond })
	clk.advance(DefaultMinRefresh)

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	_, err := v.Verify(ctx, added)
	if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, ErrInvalidToken) {
		t.Fatalf("Verify = %v, want context.DeadlineExceeded", err)
	}
	if _, err := v.Verify(context.Background(), added); err != nil {
		t.Fatalf("second caller joins the refresh: %v", err)
	}
	if got := as.jwksHits.Load(); got != 2 {
		t.Fatalf("JWKS fetches = %d, want 2", got)
	}
}

func TestCacheMaxAgeParse(t *testing.T) {
	for _, tc := range []struct {
		v  []string
		d  time.Duration
		ok bool
	}{
		{nil, 0, false},
		{[]string{"public"}, 0, false},
		{[]string{"max-age=120"}, 2 * time.Minute, true},
		{[]string{"public", "Max-Age=7"}, 7 * time.Second, true},
		{[]string{`max-age="9"`}, 9 * time.Second, true},
		{[]string{"max-age=-1"}, 0, false},
		{[]string{"max-age=abc"}, 0, false},
		{[]string{"no-cache"}, 0, true},
		{[]string{"max-age=99999999999999999999"}, 0, false},
	} {
		h := http.Header{"Cache-Control": tc.v}
		d, ok := cacheMaxAge(h)
		if d != tc.d || ok != tc.ok {
			t.Errorf("cacheMaxAge(%q) = %v, %v; want %v, %v", tc.v, d, ok, tc.d, tc.ok)
		}
	}
}
