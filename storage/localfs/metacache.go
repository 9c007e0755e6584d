package localfs

import (
	"sync"
	"sync/atomic"
)

// defaultMetaCacheSize is Options.MetaCacheSize's default.
const defaultMetaCacheSize = 65_536

// metaCache keeps parsed sidecars by key so that a read does not open and
// decode the sidecar each time. It is this Store's view only, which is exact
// because this Store is the only writer (the folder lock): every sidecar
// replacement or removal calls changed. A cached sidecar is used only when
// one of its records matches the data file just opened; otherwise the
// sidecar is read again. At most max entries are kept; when full, an
// arbitrary entry is dropped.
type metaCache struct {
	max     int
	mu      sync.RWMutex
	entries map[string]*sidecar
	// gens counts sidecar changes per key slot, so that a reader that read
	// a sidecar before a change does not store it after the change.
	gens [slots]atomic.Uint64
}

func newMetaCache(max int) *metaCache {
	return &metaCache{max: max, entries: make(map[string]*sidecar)}
}

// get returns the cached sidecar of key, or nil.
func (c *metaCache) get(key string) *sidecar {
	if c.max <= 0 {
		return nil
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.entries[key]
}

// generation returns the change count of key's slot, to pass to put.
func (c *metaCache) generation(key string) uint64 {
	return c.gens[slotOf(key)].Load()
}

// put caches m as key's sidecar, read when key's slot was at generation
// gen; it does nothing if the sidecar may have changed since.
func (c *metaCache) put(key string, gen uint64, m *sidecar) {
	if c.max <= 0 || m == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gens[slotOf(key)].Load() != gen {
		return
	}
	if _, ok := c.entries[key]; !ok && len(c.entries) >= c.max {
		for k := range c.entries {
			delete(c.entries, k)
			break
		}
	}
	// The JSON decoder leaves room for 4 records; keep only what is used.
	c.entries[key] = &sidecar{Versions: append([]record(nil), m.Versions...)}
}

// changed drops key's entry; call it after replacing or removing key's
// sidecar.
func (c *metaCache) changed(key string) {
	c.gens[slotOf(key)].Add(1)
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.entries, key)
}

// slots is how many slots keys hash onto: the per-key locks of a Store and
// the change counts of its metadata cache.
const slots = 64

// slotOf hashes key (FNV-1a) onto one of the slots.
func slotOf(key string) int {
	h := uint32(2166136261)
	for i := 0; i < len(key); i++ {
		h = (h ^ uint32(key[i])) * 16777619
	}
	return int(h % slots)
}
