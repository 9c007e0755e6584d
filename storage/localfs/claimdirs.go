package localfs

import (
	"os"
	"sync"
)

// maxClaimSets bounds the claim sets whose folders a Store keeps open.
// Sets are few (one per kind of claim the server makes); past the bound a
// check opens the set's folder each time.
const maxClaimSets = 64

// claimDirs keeps the folders .mcpblob/claims/<set> open so that checking
// a claim is one stat relative to its folder. Only this Store writes
// .mcpblob (the folder lock) and it never removes a set's folder, so a held
// folder stays the one its name designates.
type claimDirs struct {
	mu   sync.RWMutex
	sets map[string]*os.File
}

// get returns the held folder of set (nil when the folder is known not to
// exist) and whether the Store knows the set at all.
func (c *claimDirs) get(set string) (dir *os.File, known bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	dir, known = c.sets[set]
	return dir, known
}

// keep records f (nil: the folder does not exist) as set's folder unless
// the set is known already or the bound is reached. It reports whether it
// kept f; if not, the caller closes f.
func (c *claimDirs) keep(set string, f *os.File) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.sets[set]; ok || len(c.sets) >= maxClaimSets {
		return false
	}
	c.put(set, f)
	return true
}

// created records f as the folder of set, which Claim has just made sure
// exists, replacing a record of its absence. It reports whether it kept f.
func (c *claimDirs) created(set string, f *os.File) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	old, ok := c.sets[set]
	if old != nil || (!ok && len(c.sets) >= maxClaimSets) {
		return false
	}
	c.put(set, f)
	return true
}

// forget drops a record of set's absence.
func (c *claimDirs) forget(set string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if f, ok := c.sets[set]; ok && f == nil {
		delete(c.sets, set)
	}
}

func (c *claimDirs) put(set string, f *os.File) {
	if c.sets == nil {
		c.sets = make(map[string]*os.File)
	}
	c.sets[set] = f
}

func (c *claimDirs) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, f := range c.sets {
		if f != nil {
			f.Close()
		}
	}
	c.sets = nil
}
