package quota

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"time"

	"github.com/mcpblob/mcpblob/storage"
	"github.com/mcpblob/mcpblob/storage/namespace"
)

// Limit is one principal's quota; a zero field is no limit.
type Limit struct {
	Bytes   int64 `json:"bytes,omitempty"`
	Objects int64 `json:"objects,omitempty"`
}

// Usage is a namespace's usage: Bytes and Objects stored, HeldBytes and
// HeldObjects reserved by uploads in flight, and the Limit that applies.
type Usage struct {
	Bytes       int64 `json:"bytes"`
	Objects     int64 `json:"objects"`
	HeldBytes   int64 `json:"heldBytes"`
	HeldObjects int64 `json:"heldObjects"`
	Limit       Limit `json:"limit"`
}

// DefaultHoldTTL is how long a reservation lives without being renewed.
const DefaultHoldTTL = 15 * time.Minute

// maxHolds bounds the reservations of one namespace: uploads in flight.
const maxHolds = 1000

// RecordDir is the folder of the usage records (storage.Recorder names).
const RecordDir = "quota"

// record is one namespace's usage as stored: the truth, changed only by
// compare-and-swap.
type record struct {
	NS      string `json:"ns"`
	Bytes   int64  `json:"bytes"`
	Objects int64  `json:"objects"`
	Holds   []hold `json:"holds,omitempty"`
	// Claim is the quota a credential of the principal last named on any
	// node (an OAuth token's claim), for nodes that have not seen one.
	Claim *Limit `json:"claim,omitempty"`
}

// hold is a reservation: bytes and objects an upload in flight may still
// store, until Exp (Unix milliseconds).
type hold struct {
	ID      string `json:"id"`
	Bytes   int64  `json:"bytes"`
	Objects int64  `json:"objects"`
	Exp     int64  `json:"exp"`
}

// Ledger keeps the usage records of every namespace in a Recorder shared
// by all nodes, and checks changes against Limits.
type Ledger struct {
	Records storage.Recorder
	// Limits gives a namespace's quota (nil: no quota anywhere, usage
	// only counted).
	Limits Limits
	// HoldTTL is a reservation's life without renewal (DefaultHoldTTL
	// when zero); StagedHoldTTL that of a resumable upload's (the
	// default is HoldTTL times 96: a day by default).
	HoldTTL, StagedHoldTTL time.Duration
	// Now is the clock (time.Now when nil).
	Now func() time.Time
	// Changed, when set, is told every settled change: bytes and objects
	// added (negative: removed), for aggregate metrics.
	Changed func(bytes, objects int64)
	// Refused, when set, is told every refusal.
	Refused func(what string)
}

// RecordName is the record of namespace ns.
func RecordName(ns string) string {
	sum := sha256.Sum256([]byte(ns))
	return RecordDir + "/" + hex.EncodeToString(sum[:16])
}

func (l *Ledger) now() time.Time {
	if l.Now != nil {
		return l.Now()
	}
	return time.Now()
}

func (l *Ledger) ttl(staged bool) time.Duration {
	t := l.HoldTTL
	if t <= 0 {
		t = DefaultHoldTTL
	}
	if staged {
		if l.StagedHoldTTL > 0 {
			return l.StagedHoldTTL
		}
		return 96 * t
	}
	return t
}

// Usage returns namespace ns's usage, reservations that expired left out.
func (l *Ledger) Usage(ctx context.Context, ns string) (Usage, error) {
	r, _, err := l.read(ctx, ns)
	if err != nil {
		return Usage{}, err
	}
	r.dropExpired(l.now())
	u := Usage{Bytes: r.Bytes, Objects: r.Objects, Limit: l.limitOf(ns, &r)}
	u.HeldBytes, u.HeldObjects = r.held()
	return u, nil
}

// PrincipalUsage is Usage of principal's namespace.
func (l *Ledger) PrincipalUsage(ctx context.Context, principal string) (Usage, error) {
	return l.Usage(ctx, namespace.Name(principal))
}

// read returns ns's record and its version ("" when there is none yet).
func (l *Ledger) read(ctx context.Context, ns string) (record, string, error) {
	data, version, err := l.Records.GetRecord(ctx, RecordName(ns))
	if errors.Is(err, storage.ErrNotFound) {
		return record{NS: ns}, "", nil
	}
	if err != nil {
		return record{}, "", fmt.Errorf("quota: reading the usage of %q: %w", ns, err)
	}
	var r record
	if err := json.Unmarshal(data, &r); err != nil {
		return record{}, "", fmt.Errorf("quota: the usage record of %q: %w", ns, err)
	}
	r.NS = ns
	return r, version, nil
}

// errUnchanged, from an update's change, ends it without a write.
var errUnchanged = errors.New("quota: unchanged")

// update applies change to ns's record by compare-and-swap, again on a
// fresh copy whenever another writer got there first, until it holds or
// ctx ends. A change returning errUnchanged writes nothing.
func (l *Ledger) update(ctx context.Context, ns string, change func(r *record) error) error {
	for attempt := 0; ; attempt++ {
		r, version, err := l.read(ctx, ns)
		if err != nil {
			return err
		}
		r.dropExpired(l.now())
		if err := change(&r); err != nil {
			if errors.Is(err, errUnchanged) {
				return nil
			}
			return err
		}
		data, err := json.Marshal(r)
		if err != nil {
			return err
		}
		_, err = l.Records.PutRecord(ctx, RecordName(ns), data, version)
		if !errors.Is(err, storage.ErrPreconditionFailed) {
			if err != nil {
				return fmt.Errorf("quota: writing the usage of %q: %w", ns, err)
			}
			return nil
		}
		if err := backoff(ctx, attempt); err != nil {
			return fmt.Errorf("quota: writing the usage of %q: %w", ns, err)
		}
	}
}

// backoff waits a random while that grows with attempt (up to 20 ms), so
// writers that collided spread out.
func backoff(ctx context.Context, attempt int) error {
	d := time.Duration(mrand.Int64N(int64(min(attempt+1, 20)) * int64(time.Millisecond)))
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

func (r *record) dropExpired(now time.Time) {
	ms := now.UnixMilli()
	kept := r.Holds[:0]
	for _, h := range r.Holds {
		if h.Exp > ms {
			kept = append(kept, h)
		}
	}
	r.Holds = kept
}

func (r *record) held() (bytes, objects int64) {
	for _, h := range r.Holds {
		bytes += h.Bytes
		objects += h.Objects
	}
	return bytes, objects
}

func (r *record) find(id string) int {
	for i, h := range r.Holds {
		if h.ID == id {
			return i
		}
	}
	return -1
}

// newHoldID returns a fresh reservation id.
func newHoldID() string { return rand.Text()[:16] }

// nsOf is the namespace a record's bytes name ("" when unreadable).
func nsOf(data []byte) string {
	var r record
	if json.Unmarshal(data, &r) != nil {
		return ""
	}
	return r.NS
}
