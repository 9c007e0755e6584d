package quota

import (
	"sync"
	"sync/atomic"

	"github.com/mcpblob/mcpblob/storage/namespace"
)

// Limits says which quota applies to a namespace.
type Limits interface {
	// Set is the quota the operator set for ns (the quota file, a key
	// line); ok is false when none names it.
	Set(ns string) (l Limit, ok bool)
	// Claimed is the quota the credential of ns's principal named when it
	// was last seen on this node (an OAuth token's claim).
	Claimed(ns string) (l Limit, ok bool)
	// Default is the quota of every other namespace.
	Default() Limit
}

// Table is the Limits of a server: a default, the operator's quotas
// (replaced whole on a reload) and what tokens claimed. Safe for
// concurrent use.
type Table struct {
	def     atomic.Pointer[Limit]
	set     atomic.Pointer[map[string]Limit] // by namespace name
	claimed sync.Map                         // namespace name → Limit
}

// NewTable returns a Table with quota def for every namespace.
func NewTable(def Limit) *Table {
	t := &Table{}
	t.def.Store(&def)
	t.set.Store(&map[string]Limit{})
	return t
}

// Replace makes byPrincipal the operator's quotas.
func (t *Table) Replace(byPrincipal map[string]Limit) {
	m := make(map[string]Limit, len(byPrincipal))
	for p, l := range byPrincipal {
		if p != "" {
			m[namespace.Name(p)] = l
		}
	}
	t.set.Store(&m)
}

// Claim records the quota principal's credential named (a zero Limit
// forgets it).
func (t *Table) Claim(principal string, l Limit) {
	if principal == "" {
		return
	}
	ns := namespace.Name(principal)
	if l == (Limit{}) {
		t.claimed.Delete(ns)
		return
	}
	if old, ok := t.claimed.Load(ns); !ok || old.(Limit) != l {
		t.claimed.Store(ns, l)
	}
}

func (t *Table) Set(ns string) (Limit, bool) {
	l, ok := (*t.set.Load())[ns]
	return l, ok
}

func (t *Table) Claimed(ns string) (Limit, bool) {
	l, ok := t.claimed.Load(ns)
	if !ok {
		return Limit{}, false
	}
	return l.(Limit), true
}

func (t *Table) Default() Limit { return *t.def.Load() }

// limitOf resolves ns's quota against r: the operator's, else the one a
// credential claimed on this node (kept in r so other nodes apply it
// too), else the one r kept, else the default. A field the winner leaves
// zero is taken from the default.
func (l *Ledger) limitOf(ns string, r *record) Limit {
	if l.Limits == nil {
		return Limit{}
	}
	def := l.Limits.Default()
	if set, ok := l.Limits.Set(ns); ok {
		return set.or(def)
	}
	if c, ok := l.Limits.Claimed(ns); ok {
		if r != nil && (r.Claim == nil || *r.Claim != c) {
			r.Claim = &c
		}
		return c.or(def)
	}
	if r != nil && r.Claim != nil {
		return r.Claim.or(def)
	}
	return def
}

func (l Limit) or(def Limit) Limit {
	if l.Bytes == 0 {
		l.Bytes = def.Bytes
	}
	if l.Objects == 0 {
		l.Objects = def.Objects
	}
	return l
}
