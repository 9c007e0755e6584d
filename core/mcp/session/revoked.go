package session

import (
	"crypto/sha256"
	"slices"
	"time"
)

// MaxRevoked bounds the ended session ids a node remembers: 16 bytes of
// digest and an expiry each, about 5 MiB at the bound.
const MaxRevoked = 1 << 17

// Revoked remembers ended (DELETEd) session ids until they expire, compactly:
// a digest of the id, not the id. When full after dropping the expired ones,
// it forgets the eighth that expires soonest (the table logs it). Without
// a shared record of live sessions (mcp.Options.LiveSessions) a forgotten
// id becomes usable again by its principal until it expires; with one, the
// record, asked on every request, still refuses it, and Revoked is only a
// cache that spares asking again.
// Not safe for concurrent use: the server holds its lock.
type Revoked struct {
	m map[[16]byte]int64 // digest → expiry, Unix seconds
}

func digest(id string) [16]byte {
	s := sha256.Sum256([]byte(id))
	return [16]byte(s[:16])
}

// Has reports whether id was revoked.
func (r *Revoked) Has(id string) bool {
	_, ok := r.m[digest(id)]
	return ok
}

// Add revokes id until exp and reports how many revocations it had to
// forget to make room.
func (r *Revoked) Add(id string, exp time.Time, now time.Time) (forgot int) {
	if r.m == nil {
		r.m = map[[16]byte]int64{}
	}
	if len(r.m) >= MaxRevoked {
		r.Sweep(now)
	}
	if len(r.m) >= MaxRevoked {
		forgot = r.forgetSoonest(MaxRevoked / 8)
	}
	r.m[digest(id)] = exp.Unix()
	return forgot
}

// Sweep drops the revocations that expired before now.
func (r *Revoked) Sweep(now time.Time) {
	for d, exp := range r.m {
		if exp < now.Unix() {
			delete(r.m, d)
		}
	}
}

func (r *Revoked) forgetSoonest(n int) int {
	exps := make([]int64, 0, len(r.m))
	for _, exp := range r.m {
		exps = append(exps, exp)
	}
	slices.Sort(exps)
	cut := exps[n-1]
	forgot := 0
	for d, exp := range r.m {
		if exp <= cut && forgot < n {
			delete(r.m, d)
			forgot++
		}
	}
	return forgot
}
