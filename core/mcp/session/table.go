package session

import (
	"sync"
	"time"
)

// Table is one node's 2025-11-25 sessions: the states it holds and the
// ids it knows ended. Safe for concurrent use; the zero Table is empty.
type Table struct {
	mu      sync.Mutex
	states  map[string]*State
	revoked Revoked
	created int
}

// Add holds sess, a session this node just minted; every 256th addition
// drops idle and expired states.
func (t *Table) Add(sess *State) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.states == nil {
		t.states = map[string]*State{}
	}
	t.states[sess.ID] = sess
	t.created++
	if t.created%256 == 0 {
		t.sweepLocked()
	}
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
	t.mu.Lock()
	defer t.mu.Unlock()
	sess := t.states[id]
	if sess != nil && time.Now().After(sess.Expires) {
		t.dropLocked(id, sess)
		return nil
	}
	if sess == nil || sess.Principal != principal {
		return nil
	}
	sess.Touch()
	return sess
}

// Get returns the state of the verified session id, touched, built by
// rebuild when none is held; nil when id was revoked here or its state
// expired (an expired state is dropped and closed).
func (t *Table) Get(id string, rebuild func() *State) *State {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.revoked.Has(id) {
		return nil
	}
	sess := t.states[id]
	if sess == nil {
		sess = rebuild()
		if t.states == nil {
			t.states = map[string]*State{}
		}
		t.states[id] = sess
	}
	if time.Now().After(sess.Expires) {
		t.dropLocked(id, sess)
		return nil
	}
	sess.Touch()
	return sess
}

// Lookup is the state held for id, or nil, without touching it.
func (t *Table) Lookup(id string) *State {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.states[id]
}

// Revoke drops id's state and remembers id as ended until exp. It returns
// the dropped state (nil when none was held), whether id was not already
// revoked, and how many remembered ids were forgotten to make room.
func (t *Table) Revoke(id string, exp time.Time) (sess *State, fresh bool, forgot int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	sess = t.states[id]
	delete(t.states, id)
	if fresh = !t.revoked.Has(id); fresh {
		forgot = t.revoked.Add(id, exp, time.Now())
	}
	return sess, fresh, forgot
}

// Len is the number of states held.
func (t *Table) Len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.states)
}

// sweepLocked drops sessions idle for an hour and expired revocations.
func (t *Table) sweepLocked() {
	now := time.Now()
	for id, sess := range t.states {
		if sess.Idle(now) || now.After(sess.Expires) {
			t.dropLocked(id, sess)
		}
	}
	t.revoked.Sweep(now)
}

// dropLocked forgets id's state and closes it, which gives back what it
// holds (its subscriptions' budget). A state leaves the table here or by
// Revoke, whose caller closes it.
func (t *Table) dropLocked(id string, sess *State) {
	delete(t.states, id)
	sess.Close()
}
