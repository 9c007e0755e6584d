package budget

import (
	"fmt"
	"log/slog"
	"sync"
	"time"
)

// Scope says which bound a refusal met.
type Scope string

// The scopes of a limit.
const (
	PerPrincipal Scope = "principal"
	PerNode      Scope = "node"
)

// Exceeded is the refusal of [Pool.Take] and [Rate.Allow]: taking would
// pass the limit Name's bound Max in Scope. RetryAfter is when trying again
// can succeed (a rate's next window), zero when it depends on what other
// requests give back.
type Exceeded struct {
	Name       string
	Scope      Scope
	Max        int64
	RetryAfter time.Duration
}

func (e *Exceeded) Error() string {
	return fmt.Sprintf("budget: limit %s reached (%d per %s)", e.Name, e.Max, e.Scope)
}

// Limit names a resource and its bounds; a bound of 0 or less is none.
type Limit struct {
	Name         string
	PerPrincipal int64
	PerNode      int64
}

// Pool is one resource held per principal and per node. Safe for
// concurrent use.
type Pool struct {
	limit Limit
	warn  *warner
	mu    sync.Mutex
	held  map[string]int64
	total int64
}

// NewPool returns an empty pool for limit; refusals are logged to log
// (nil: not logged).
func NewPool(limit Limit, log *slog.Logger) *Pool {
	return &Pool{limit: limit, warn: newWarner(log), held: map[string]int64{}}
}

// Notify makes f see every refusal of the pool (a metric counts them);
// call it before the pool is shared.
func (p *Pool) Notify(f func(*Exceeded)) { p.warn.notify = f }

// Limit is the pool's limit.
func (p *Pool) Limit() Limit { return p.limit }

// Take reserves n units for principal, or takes nothing and returns an
// *Exceeded when that would pass the principal's or the node's bound.
func (p *Pool) Take(principal string, n int64) error {
	p.mu.Lock()
	e := p.exceeds(principal, n)
	if e == nil {
		p.held[principal] += n
		p.total += n
	}
	p.mu.Unlock()
	if e != nil {
		p.warn.once(e, principal)
		return e
	}
	return nil
}

func (p *Pool) exceeds(principal string, n int64) *Exceeded {
	l := p.limit
	switch {
	case l.PerPrincipal > 0 && p.held[principal]+n > l.PerPrincipal:
		return &Exceeded{Name: l.Name, Scope: PerPrincipal, Max: l.PerPrincipal}
	case l.PerNode > 0 && p.total+n > l.PerNode:
		return &Exceeded{Name: l.Name, Scope: PerNode, Max: l.PerNode}
	}
	return nil
}

// Give returns n units principal took. Giving back more than was taken is
// a bug of the caller and panics, so that a leak or a double release shows.
func (p *Pool) Give(principal string, n int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	left := p.held[principal] - n
	if left < 0 {
		panic(fmt.Sprintf("budget: %s: %d units given back that were not taken", p.limit.Name, -left))
	}
	if left == 0 {
		delete(p.held, principal)
	} else {
		p.held[principal] = left
	}
	p.total -= n
}

// Held is what principal holds now.
func (p *Pool) Held(principal string) int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.held[principal]
}

// Total is what the node holds now.
func (p *Pool) Total() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.total
}
