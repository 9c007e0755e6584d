package oauth

import (
	"context"
	"crypto/sha256"
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestTokenCacheMakesABearerCheap: the second Verify of one token does not
// check its signature again (it allocates next to nothing, where a check
// parses the JWS and its claims), and returns the same claims.
func TestTokenCacheMakesABearerCheap(t *testing.T) {
	as := standardAS(t)
	v := verifier(t, as, &clock{t: epoch}, nil)
	tok := sign(t, keyRSA, "", false, goodClaims(as), nil)
	first, err := v.Verify(context.Background(), tok)
	if err != nil {
		t.Fatal(err)
	}
	uncached := testing.AllocsPerRun(20, func() { v.verify(context.Background(), tok) })
	cached := testing.AllocsPerRun(200, func() {
		c, err := v.Verify(context.Background(), tok)
		if err != nil || c.Principal != first.Principal || c.ID != first.ID {
			t.Fatalf("cached Verify: %+v, %v", c, err)
		}
	})
	if cached > 2 || uncached < 10*cached {
		t.Fatalf("allocations per Verify: cached %.0f, full check %.0f: the cache is not used", cached, uncached)
	}
}

// TestTokenCacheKeepsEveryRefusal: what refuses a new token refuses a
// remembered one: expiry (exp plus the leeway), a tampered copy (another
// digest, so the full check), and the key's retirement at the next JWKS
// refresh.
func TestTokenCacheKeepsEveryRefusal(t *testing.T) {
	keys(t)
	as := newFakeAS(t, "", keyRSA.jwk(true), keyEC256.jwk(true))
	clk := &clock{t: epoch}
	v := verifier(t, as, clk, func(c *Config) { c.Leeway = 10 * time.Second })
	tok := sign(t, keyRSA, "", false, goodClaims(as), nil)
	expect(t, v, tok, "", as, 1)
	expect(t, v, tok, "", as, 1)
	dot := strings.LastIndexByte(tok, '.')
	tampered := tok[:dot+1] + strings.Repeat("A", len(tok)-dot-1)
	expect(t, v, tampered, "bad signature", as, 1)

	as.setKeys(keyEC256.jwk(true)) // the AS retires rsa-1
	clk.advance(DefaultMaxAge)
	expect(t, v, tok, "unknown signing key", as, 2)

	as.setKeys(keyRSA.jwk(true))
	clk.advance(DefaultMaxAge)
	expect(t, v, tok, "", as, 3)
	clk.advance(time.Hour - 2*DefaultMaxAge + 9*time.Second)
	expect(t, v, tok, "", as, 4) // exp + 9 s: inside the leeway (the JWKS was stale again: fetched)
	clk.advance(time.Second)
	expect(t, v, tok, "expired", as, 4)
}

// TestTokenCacheIsBounded: however many distinct tokens with large claims
// are remembered, the cache keeps within tokenCacheBytes.
func TestTokenCacheIsBounded(t *testing.T) {
	var c tokenCache
	big := strings.Repeat("s", 8<<10)
	for i := range 5000 {
		sum := sha256.Sum256(fmt.Appendf(nil, "token-%d", i))
		c.put(sum, &tokenEntry{claims: Claims{Subject: big, Principal: big}})
		if c.bytes > tokenCacheBytes {
			t.Fatalf("after %d tokens the cache holds %d bytes of claims (limit %d)", i+1, c.bytes, tokenCacheBytes)
		}
	}
	if n := len(c.bySum); n == 0 || n > tokenCacheBytes/(16<<10) {
		t.Fatalf("%d entries", n)
	}
}
