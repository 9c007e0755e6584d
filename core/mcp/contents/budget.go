package contents

import (
	"math/bits"
	"runtime"
	"sync"
	"sync/atomic"
)

// MemoryBudget is the encode memory that all base64 streams of the process
// share: buffers, and file windows mapped for encoding. Each stream's share
// is MemoryBudget divided by the streams encoding at once, between
// minShare and maxShare, so the total stays near MemoryBudget however many
// streams run; only past MemoryBudget/minShare streams (4,096) does the
// floor of minShare per stream take over.
const MemoryBudget = 32 << 20

// Share limits: one lone stream gets maxShare (a 3 MiB mapped window and
// two 1 MiB base64 buffers); minShare holds the smallest buffers (3 KiB raw
// and 4 KiB base64).
const (
	maxShare = 6 << 20
	minShare = 8 << 10
)

// Buffer and window sizes. Base64 buffers are powers of two from minOut to
// maxOut (inlineMaxOut for a stream that encodes inline: its buffer and
// chunk stay in L2 between the encode and the write, which costs less CPU
// than larger writes save); a raw chunk is 3/4 of its base64 buffer, so
// every chunk but the last encodes without padding. Mapped windows hold
// whole raw chunks, at least minWindow (below that, read(2) into a buffer
// costs less than mapping) and at most maxWindow.
const (
	minOut       = 4 << 10
	inlineMaxOut = 256 << 10
	maxOut       = 1 << 20
	minWindow    = 1 << 20
	maxWindow    = 3 << 20
)

// plan is how one stream encodes for a while: its buffer sizes, whether it
// encodes from mapped windows of the file, and whether a second goroutine
// encodes ahead while the caller writes.
type plan struct {
	out    int // base64 bytes per write, a power of two
	raw    int // raw bytes per chunk: out/4*3
	window int // raw bytes mapped at once (a multiple of raw; less at the end); 0: read into a buffer
	depth  int // base64 buffers in use: 2 when encoding ahead, else 1
}

// memory is what the plan holds at most: its buffers and its raw chunk or
// mapped window.
func (p plan) memory() int { return p.depth*p.out + max(p.raw, p.window) }

// planFor sizes a stream's buffers for a share of the budget and left raw
// bytes still to encode (no buffer is larger than they need). mappable
// says the source is a file that can be mapped; ahead asks for double
// buffering.
func planFor(share, left int64, mappable, ahead bool) plan {
	p, most := plan{depth: 1}, int64(inlineMaxOut)
	if ahead {
		p.depth, most = 2, maxOut
	}
	need := ceilPow2((left + 2) / 3 * 4)
	p.out = int(clamp(min(floorPow2(share/int64(2*p.depth)), need), minOut, most))
	p.raw = p.out / 4 * 3
	if mappable {
		w := clamp(share-int64(p.depth*p.out), 0, maxWindow)
		w -= w % int64(p.raw)
		if w >= minWindow {
			p.window = int(w)
		}
	}
	return p
}

// budget counts the streams encoding at once and the memory their plans
// hold. A plan is reserved before its buffers are taken and released after
// its last write, so memory held by streams stalled on slow sockets counts
// against the others: the total stays within limit, plus the smallest plan
// for each stream past it (smallest plans are never refused).
type budget struct {
	limit int64
	// aheadMax is how many streams may encode ahead at once (see join).
	aheadMax int64
	active   atomic.Int64 // streams between join and leave
	used     atomic.Int64 // bytes of the plans reserved now
}

// streams is the process's budget: streams on every connection and every
// server in the process draw from it. A stream encodes ahead while it runs
// nearly alone (at most GOMAXPROCS/2 streams, at least one), when a core is
// likely spare for its encoder. Measured on two cores with a loopback client
// (which holds the other core): 0.80× nginx sendfile against 0.72× inline on
// an idle machine, but 0.72× against 0.90× (and 25% more CPU per byte) while
// other processes kept the machine busy.
var streams = &budget{limit: MemoryBudget, aheadMax: int64(max(1, runtime.GOMAXPROCS(0)/2))}

// join counts a stream in; the returned func counts it out. alone reports
// that the stream shares the process with few others (at most
// GOMAXPROCS/2, at least one), ahead that it may encode ahead (at most
// aheadMax streams).
func (b *budget) join() (alone, ahead bool, leave func()) {
	n := b.active.Add(1)
	return n <= int64(max(1, runtime.GOMAXPROCS(0)/2)), n <= b.aheadMax, func() { b.active.Add(-1) }
}

// share is one stream's fair part of the budget now.
func (b *budget) share() int64 {
	return clamp(b.limit/max(1, b.active.Load()), minShare, maxShare)
}

// reserve returns the largest plan within the stream's share (see planFor)
// that the budget still has room for, halving it until it fits; the
// smallest plan (minOut buffers and no window) is always granted. Release
// it with release.
func (b *budget) reserve(left int64, mappable, ahead bool) plan {
	for share := b.share(); ; share /= 2 {
		p := planFor(share, left, mappable, ahead)
		m := int64(p.memory())
		if b.used.Add(m) <= b.limit || p.out == minOut && p.window == 0 {
			return p
		}
		b.used.Add(-m)
	}
}

// release gives back what reserve took for p.
func (b *budget) release(p plan) { b.used.Add(-int64(p.memory())) }

// poolClasses is how many buffer pools there are: they are indexed by
// bits.Len of the base64 size, up to maxOut.
const poolClasses = 22

// Buffers come from one pool per power-of-two size, raw and base64 apart,
// so a stream that shrinks or grows its plan reuses what others returned.
var (
	outPools [poolClasses]sync.Pool
	rawPools [poolClasses]sync.Pool
)

// getBuf returns a buffer of n bytes from the pool of the plan whose
// base64 buffer is out bytes (n is out, or out/4*3 for raw buffers).
func getBuf(pools *[poolClasses]sync.Pool, out, n int) *[]byte {
	if b, ok := pools[bits.Len(uint(out))].Get().(*[]byte); ok && len(*b) == n {
		return b
	}
	b := make([]byte, n)
	return &b
}

func getOut(out int) *[]byte { return getBuf(&outPools, out, out) }
func putOut(b *[]byte)       { outPools[bits.Len(uint(len(*b)))].Put(b) }
func getRaw(out int) *[]byte { return getBuf(&rawPools, out, out/4*3) }
func putRaw(b *[]byte)       { rawPools[bits.Len(uint(len(*b)/3*4))].Put(b) }

func floorPow2(n int64) int64 {
	if n <= 0 {
		return 0
	}
	return 1 << (bits.Len64(uint64(n)) - 1)
}

func ceilPow2(n int64) int64 {
	if n <= 1 {
		return 1
	}
	return 1 << bits.Len64(uint64(n-1))
}

func clamp(v, lo, hi int64) int64 { return min(max(v, lo), hi) }
