package oauth

import (
	"context"
	"crypto/sha256"
	"sync"
)

// A verified token is remembered by its SHA-256, so a client sending the
// same bearer on every request pays the signature check (an RSA or ECDSA
// verification, tens to hundreds of µs) once. A remembered token is taken
// again only while it has not expired and its key is still the one the
// current JWKS gives for its kid and algorithm: key rotation and expiry act
// on it exactly as on a token seen for the first time: an entry holds only
// while the JWKS snapshot that verified it is the current one (a refresh
// sends every token through the full check once more). Refused tokens are
// not remembered.
const (
	// tokenCacheBytes bounds the memory the remembered claims take (their
	// strings, plus a fixed cost per entry); beyond it random entries go.
	tokenCacheBytes = 4 << 20
	tokenEntryCost  = 256
)

type tokenEntry struct {
	claims Claims
	keys   *keySet // the JWKS snapshot whose key verified it
	cost   int
}

// tokenCache is a bounded map from a token's digest to what verifying it
// gave.
type tokenCache struct {
	mu    sync.Mutex
	bySum map[[sha256.Size]byte]*tokenEntry
	bytes int
}

func (c *tokenCache) get(sum [sha256.Size]byte) *tokenEntry {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.bySum[sum]
}

func (c *tokenCache) drop(sum [sha256.Size]byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.bySum[sum]; ok {
		delete(c.bySum, sum)
		c.bytes -= e.cost
	}
}

// put remembers e, first letting go of random entries (map order) until it
// fits in tokenCacheBytes.
func (c *tokenCache) put(sum [sha256.Size]byte, e *tokenEntry) {
	e.cost = tokenEntryCost + claimsSize(e.claims)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.bySum == nil {
		c.bySum = map[[sha256.Size]byte]*tokenEntry{}
	}
	if old, ok := c.bySum[sum]; ok {
		c.bytes -= old.cost
	}
	for k, old := range c.bySum {
		if c.bytes+e.cost <= tokenCacheBytes {
			break
		}
		delete(c.bySum, k)
		c.bytes -= old.cost
	}
	c.bySum[sum] = e
	c.bytes += e.cost
}

func claimsSize(c Claims) int {
	n := len(c.Subject) + len(c.Principal) + len(c.ClientID) + len(c.ID)
	for _, s := range c.Scopes {
		n += len(s) + 16
	}
	return n
}

// cached returns the claims of a token verified before, when its entry
// still holds: not expired (exp plus the leeway), and verified with the
// current JWKS snapshot (v.current refreshes a stale one, as for any token;
// its failure is returned as it would be for a new token). ok false sends
// the caller to the full check.
func (v *Verifier) cached(ctx context.Context, sum [sha256.Size]byte) (c Claims, ok bool, err error) {
	e := v.tokens.get(sum)
	if e == nil {
		return Claims{}, false, nil
	}
	set, err := v.current(ctx)
	if err != nil {
		return Claims{}, false, err
	}
	if set != e.keys || !v.now().Before(e.claims.Expiry.Add(v.cfg.Leeway)) {
		v.tokens.drop(sum)
		return Claims{}, false, nil
	}
	return e.claims, true, nil
}
