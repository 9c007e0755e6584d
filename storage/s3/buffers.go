package s3

// partsInFlight is how many parts a Writer uploads at once by default.
const partsInFlight = 1

// maxIdleParts is how many part buffers a Store keeps between uploads: one
// upload's worth (a part in flight and the part being filled), so that
// back-to-back uploads allocate nothing while an idle Store holds at most
// that much.
const maxIdleParts = partsInFlight + 1

// partBuffers is a bounded free list of part-sized buffers shared by a
// Store's Writers. Unlike a sync.Pool, whose contents the collector drops
// (so the next upload allocates anew while the old buffers still count in
// the heap goal), it keeps a fixed number and frees the rest at once.
type partBuffers struct {
	size int
	free chan []byte
}

func newPartBuffers(size, idle int) *partBuffers {
	return &partBuffers{size: size, free: make(chan []byte, idle)}
}

// get returns an empty buffer of capacity size, kept or new.
func (p *partBuffers) get() []byte {
	select {
	case b := <-p.free:
		return b
	default:
		return make([]byte, 0, p.size)
	}
}

// put keeps b for a later get when there is room and b is a part buffer;
// otherwise b is left to the collector.
func (p *partBuffers) put(b []byte) {
	if cap(b) != p.size {
		return
	}
	select {
	case p.free <- b[:0]:
	default:
	}
}

// idle reports how many buffers are kept.
func (p *partBuffers) idle() int { return len(p.free) }
