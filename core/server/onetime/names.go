package onetime

import (
	"hash/maphash"
	"sync/atomic"
)

// sessionNames remembers the record names (SessionName) of the session ids
// seen last, so that a session's requests do not hash its id again each
// time: a direct-mapped cache of nameSlots entries, each an id and its
// name, replaced whole. A name is a function of its id alone, so a hit is
// exact; a miss (another id in the slot) computes it. Bounded: nameSlots
// ids and names at most. Safe for concurrent use.
type sessionNames struct {
	seed  maphash.Seed
	slots [nameSlots]atomic.Pointer[namedID]
}

const nameSlots = 1024

type namedID struct{ id, name string }

func newSessionNames() *sessionNames { return &sessionNames{seed: maphash.MakeSeed()} }

// of returns SessionName(id).
func (c *sessionNames) of(id string) string {
	slot := &c.slots[maphash.String(c.seed, id)%nameSlots]
	if e := slot.Load(); e != nil && e.id == id {
		return e.name
	}
	name := SessionName(id)
	slot.Store(&namedID{id: id, name: name})
	return name
}
