package tus

import (
	"sync"

	"github.com/mcpblob/mcpblob/storage"
)

// recentUploads keeps, per upload, a copy of its record as a PATCH on
// this node last wrote (or a HEAD read) it, so that the next PATCH here
// need not read it: one round trip to the store less. The copy is a guess
// that nothing depends on: a PATCH uses it only when its first write to
// the store is the compare-and-swap of the record that takes its part
// numbers (cachedFor), which a stale copy fails; the PATCH then reads the
// record and goes on as if it had read it first (appender.retake). So
// another node needs nothing of it. It is bounded by the segments the
// copies hold (maxRecentSegments), and emptied when full.
type recentUploads struct {
	mu   sync.Mutex
	m    map[string]Upload
	segs int
}

// maxRecentSegments bounds the segments the copies hold, together.
const maxRecentSegments = 1 << 14

// get returns a copy of id's record, or nil.
func (r *recentUploads) get(id string) *Upload {
	r.mu.Lock()
	defer r.mu.Unlock()
	u, ok := r.m[id]
	if !ok {
		return nil
	}
	u.cached = true
	return &u
}

// put keeps a copy of u (a done one is dropped).
func (r *recentUploads) put(u *Upload) {
	if u.Done || u.Expired {
		r.drop(u.ID)
		return
	}
	c := *u
	c.cached = false
	r.mu.Lock()
	defer r.mu.Unlock()
	r.dropLocked(u.ID)
	if r.m == nil || r.segs+len(c.Segments) > maxRecentSegments {
		r.m, r.segs = make(map[string]Upload), 0
	}
	if len(c.Segments) > maxRecentSegments {
		return
	}
	r.m[c.ID] = c
	r.segs += len(c.Segments)
}

func (r *recentUploads) drop(id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.dropLocked(id)
}

func (r *recentUploads) dropLocked(id string) {
	if u, ok := r.m[id]; ok {
		r.segs -= len(u.Segments)
		delete(r.m, id)
	}
}

// remember keeps a copy of u's record for the next PATCH, on a store
// where cachedFor may use it.
func (h *Handler) remember(u *Upload) {
	if h.sendsParts() {
		h.recent.put(u)
	}
}

// cachedFor returns this node's copy of the upload req PATCHes at off,
// when it may stand for the record: the PATCH's first write to the store
// is then the compare-and-swap that takes its part numbers. That holds
// for a staged upload whose segments are all parts, on a store that takes
// a part's bytes as they arrive (storage.StagedSender, S3), for a body of
// a known length that is a part (at least the store's part minimum, or
// the upload's last bytes). Otherwise nil: the PATCH reads the record.
func (h *Handler) cachedFor(req Request, off int64) *Upload {
	if !h.sendsParts() || req.Header("Upload-Length") != "" || req.ContentLength <= 0 {
		return nil
	}
	u := h.recent.get(req.ID)
	if u == nil || u.Owner != req.Principal || u.Offset != off || u.Length < 0 || u.Staged == "" || u.Partial ||
		!h.Now().Before(u.Expires) {
		return nil
	}
	if n := len(u.Segments); n > 0 && u.Segments[n-1].Part == nil {
		return nil
	}
	cl := req.ContentLength
	if cl > u.Length-u.Offset || cl < int64(h.Stager.StagedPartMin()) && u.Offset+cl != u.Length {
		return nil
	}
	return u
}

// sendsParts reports whether h's store takes a part's bytes as they arrive
// in one upload (storage.StagedSender, S3) and has no single writer
// process to claim numbers in memory: where recentUploads applies.
func (h *Handler) sendsParts() bool {
	return h.Stager != nil && storage.SenderOf(h.Stager) != nil && storage.ClaimerOf(h.Stager) == nil
}
