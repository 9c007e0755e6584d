package s3

// partsInFlight is how many parts a Writer uploads at once by default.
const partsInFlight = 2

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

// maxParts is S3's limit on the parts of a multipart upload.
const maxParts = 10000

// partsPerStep is how many parts of one size an upload of unknown size
// sends before its part size doubles.
const partsPerStep = 2000

// partSizeFor returns the size of part n (from 1) of an upload that
// declared size bytes (0: unknown). Every part has the Store's part size
// as long as the 10,000 parts S3 allows can hold the object: a declared
// size beyond that gets the smallest part size (in whole MiB) that fits;
// an unknown size doubles the part size every 2,000 parts. With 8 MiB parts
// that is 15.6 GiB at 8 MiB, then 16, 32, 64 and 128 MiB parts, up to
// 484 GiB in all; only uploads past 15.6 GiB take larger buffers, which the
// Store does not keep.
func (s *Store) partSizeFor(n int, size int64) int {
	if size > 0 {
		const mib = 1 << 20
		fit := (size + maxParts*mib - 1) / (maxParts * mib) * mib
		return int(min(max(s.partSize, fit), maxPartSize))
	}
	return int(min(s.partSize<<((n-1)/s.partsPerStep), maxPartSize))
}
