package lifecycle

import (
	"strings"
	"time"

	"github.com/mcpblob/mcpblob/storage"
)

// Policy decides when a blob expires: at its own expiry (Info.Expires,
// from ttlSeconds) or Rule.After its last write when a rule's prefix
// matches, whichever comes first.
type Policy struct {
	Rules []Rule
	// Now is the clock; nil is time.Now. Tests move it.
	Now func() time.Time
}

// now returns the policy's time.
func (p *Policy) now() time.Time {
	if p == nil || p.Now == nil {
		return time.Now()
	}
	return p.Now()
}

// Expiry returns when info's blob expires, zero when it never does.
func (p *Policy) Expiry(info storage.Info) time.Time {
	exp := info.Expires
	if p == nil || len(p.Rules) == 0 {
		return exp
	}
	key := ownKey(info.Key)
	for _, r := range p.Rules {
		if !strings.HasPrefix(key, r.Prefix) {
			continue
		}
		if t := info.ModTime.Add(r.After); exp.IsZero() || t.Before(exp) {
			exp = t
		}
	}
	return exp
}

// Expired reports whether info's blob has expired at now: its expiry is
// at or before now.
func (p *Policy) Expired(info storage.Info, now time.Time) bool {
	exp := p.Expiry(info)
	return !exp.IsZero() && !exp.After(now)
}
