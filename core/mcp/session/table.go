package session

import (
	"container/list"
	"log/slog"
	"sync"
	"time"

	"github.com/mcpblob/mcpblob/core/budget"
)

// Table is one node's 2025-11-25 sessions: the states it holds and the
// ids it knows ended. Safe for concurrent use; the zero Table is empty and
// unbounded.
//
// Every state held, minted here ([Table.Add]) or rebuilt on first use
// ([Table.Get]), takes one unit of its principal in the table's pool; the
// unit is given back exactly when the state is dropped (revoked, expired,
// swept idle, or evicted). At the pool's bound the table evicts the least
// recently used idle session (no GET stream, no request in flight) of the
// principal, or of the node when the node's bound is met: the evicted
// session is revoked here and returned to the caller, which ends it as a
// DELETE does. When none is idle, the new state is refused with the
// pool's *budget.Exceeded.
type Table struct {
	pool *budget.Pool // nil: no bound
	log  *slog.Logger

	mu      sync.Mutex
	states  map[string]*held
	all     list.List             // every held state, most recently used first
	mine    map[string]*list.List // each principal's held states, most recently used first
	revoked Revoked
	created int
}

// held is a state in the table and its places in the two usage orders.
type held struct {
	sess        *State
	inAll, mine *list.Element
}

// NewTable returns an empty table whose states take units of pool (nil:
// unbounded); log (nil: discarded) hears when ended ids had to be forgotten.
func NewTable(pool *budget.Pool, log *slog.Logger) *Table {
	return &Table{pool: pool, log: log, states: map[string]*held{}, mine: map[string]*list.List{}}
}

// Add holds sess, a session this node just minted; every 256th addition
// drops (and closes) idle and expired states. It returns the sessions evicted to make
// room (revoked here; the caller ends them everywhere and closes them) and,
// when there was no room, the pool's *budget.Exceeded (sess is then not
// held).
func (t *Table) Add(sess *State) (evicted []*State, err error) {
	var dropped []*State
	defer func() { closeAll(dropped) }()
	t.mu.Lock()
	defer t.mu.Unlock()
	if evicted, err = t.admitLocked(sess.Principal); err != nil {
		return evicted, err
	}
	t.holdLocked(sess)
	t.created++
	if t.created%256 == 0 {
		dropped = t.sweepLocked()
	}
	return evicted, nil
}

// Known is the state held for id when it is bound to principal,
// unexpired and not revoked, touched; nil sends the caller to the full
// check of the signed id. A state is held only for an id whose signature
// was checked (minted here, or rebuilt by Get after a check), so as long
// as the keys do not change, Known needs no signature check: expiry and
// principal are checked here as the full check checks them. A held state
// is never a revoked one (Revoke drops it, Get refuses to rebuild it), so
// Known needs no digest of id either. An expired state is dropped (and
// closed) here.
func (t *Table) Known(id, principal string) *State {
	var dropped []*State
	defer func() { closeAll(dropped) }()
	t.mu.Lock()
	defer t.mu.Unlock()
	h := t.states[id]
	if h == nil || h.sess.Principal != principal {
		return nil
	}
	if time.Now().After(h.sess.Expires) {
		dropped = append(dropped, t.dropLocked(h))
		return nil
	}
	t.touchLocked(h)
	return h.sess
}

// Get returns the state of the verified session id, touched, built by
// rebuild when none is held (which takes a unit of the pool as Add does,
// evicting as Add does; see there for evicted and err); nil when id was
// revoked here or its held state expired (an expired state is dropped and
// closed).
func (t *Table) Get(id string, rebuild func() *State) (sess *State, evicted []*State, err error) {
	var dropped []*State
	defer func() { closeAll(dropped) }()
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.revoked.Has(id) {
		return nil, nil, nil
	}
	if h := t.states[id]; h != nil {
		if time.Now().After(h.sess.Expires) {
			dropped = append(dropped, t.dropLocked(h))
			return nil, nil, nil
		}
		t.touchLocked(h)
		return h.sess, nil, nil
	}
	sess = rebuild()
	if evicted, err = t.admitLocked(sess.Principal); err != nil {
		return nil, evicted, err
	}
	t.holdLocked(sess)
	return sess, evicted, nil
}

// Lookup is the state held for id, or nil, without touching it.
func (t *Table) Lookup(id string) *State {
	t.mu.Lock()
	defer t.mu.Unlock()
	if h := t.states[id]; h != nil {
		return h.sess
	}
	return nil
}

// Ended reports whether id was revoked here.
func (t *Table) Ended(id string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.revoked.Has(id)
}

// Revoke drops id's state and remembers id as ended until exp. It returns
// the dropped state (nil when none was held; the caller closes it) and
// whether id was not already revoked.
func (t *Table) Revoke(id string, exp time.Time) (sess *State, fresh bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if h := t.states[id]; h != nil {
		sess = t.dropLocked(h)
	}
	if fresh = !t.revoked.Has(id); fresh {
		t.revokeLocked(id, exp)
	}
	return sess, fresh
}

// Forget drops and closes id's state without revoking it: its session
// was never given to a client (initialize failed after Add).
func (t *Table) Forget(id string) {
	var dropped []*State
	defer func() { closeAll(dropped) }()
	t.mu.Lock()
	defer t.mu.Unlock()
	if h := t.states[id]; h != nil {
		dropped = append(dropped, t.dropLocked(h))
	}
}

// Len is the number of states held.
func (t *Table) Len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.states)
}

// admitLocked makes room for one more state of principal: it evicts the
// least recently used idle session of the principal while the principal
// is at its bound, then of the node while the node is, and takes the unit.
func (t *Table) admitLocked(principal string) (evicted []*State, err error) {
	if t.pool == nil {
		return nil, nil
	}
	l := t.pool.Limit()
	for {
		var victim *held
		switch {
		case l.PerPrincipal > 0 && t.pool.Held(principal) >= l.PerPrincipal:
			victim = idlest(t.mine[principal])
		case l.PerNode > 0 && t.pool.Total() >= l.PerNode:
			victim = idlest(&t.all)
		}
		if victim == nil {
			break
		}
		evicted = append(evicted, t.dropLocked(victim))
		t.revokeLocked(victim.sess.ID, victim.sess.Expires)
	}
	return evicted, t.pool.Take(principal, 1)
}

// idlest is the least recently used idle state of l (nil: none). It
// walks past busy states only, whose number the bounds on streams and
// requests keep small.
func idlest(l *list.List) *held {
	if l == nil {
		return nil
	}
	for e := l.Back(); e != nil; e = e.Prev() {
		h := e.Value.(*held)
		if !h.sess.Busy() {
			return h
		}
	}
	return nil
}

// holdLocked holds sess, whose unit is taken, as the most recently used.
func (t *Table) holdLocked(sess *State) {
	if t.states == nil {
		t.states, t.mine = map[string]*held{}, map[string]*list.List{}
	}
	h := &held{sess: sess}
	h.inAll = t.all.PushFront(h)
	l := t.mine[sess.Principal]
	if l == nil {
		l = list.New()
		t.mine[sess.Principal] = l
	}
	h.mine = l.PushFront(h)
	t.states[sess.ID] = h
}

// touchLocked records that h was used now.
func (t *Table) touchLocked(h *held) {
	h.sess.Touch()
	t.all.MoveToFront(h.inAll)
	t.mine[h.sess.Principal].MoveToFront(h.mine)
}

// dropLocked forgets h and gives its unit back; it returns h's state, for
// the caller to close outside the lock (closing gives back what the state
// holds: its subscriptions' budget).
func (t *Table) dropLocked(h *held) *State {
	sess := h.sess
	delete(t.states, sess.ID)
	t.all.Remove(h.inAll)
	if l := t.mine[sess.Principal]; l != nil {
		l.Remove(h.mine)
		if l.Len() == 0 {
			delete(t.mine, sess.Principal)
		}
	}
	if t.pool != nil {
		t.pool.Give(sess.Principal, 1)
	}
	return sess
}

// revokeLocked remembers id as ended until exp.
func (t *Table) revokeLocked(id string, exp time.Time) {
	if forgot := t.revoked.Add(id, exp, time.Now()); forgot > 0 && t.log != nil {
		t.log.Warn("mcp: too many ended sessions to remember; the soonest-expiring ids were forgotten", "forgot", forgot, "limit", MaxRevoked)
	}
}

// sweepLocked drops sessions idle for an hour and expired ones, and
// expired revocations; it returns the dropped states.
func (t *Table) sweepLocked() []*State {
	now := time.Now()
	var dropped []*State
	for _, h := range t.states {
		if h.sess.Idle(now) || now.After(h.sess.Expires) {
			dropped = append(dropped, t.dropLocked(h))
		}
	}
	t.revoked.Sweep(now)
	return dropped
}

// closeAll closes states dropped from the table, outside its lock.
func closeAll(states []*State) {
	for _, sess := range states {
		sess.Close()
	}
}
