package tus

import (
	"context"
	"crypto/sha256"
	"encoding"
	"encoding/binary"
	"fmt"
	"hash"
	"sync"
	"sync/atomic"

	"github.com/mcpblob/mcpblob/storage"
)

// objHasher is the SHA-256 of a staged upload's bytes as one request
// appends them. A goroutine of its own hashes the pieces the request
// reads, in order, beside their writes, and publishes its state every
// hashChunk bytes. A record write takes the state reached (Upload.Hash
// then covers the bytes up to an offset at or below Upload.Offset), so a
// PATCH answers once its bytes are durable, not once they are hashed,
// where the store can read its staged bytes back (storage.StagedReader);
// elsewhere (S3), and when the record write completes the upload, the
// state caught up first. What is left when the request ends is hashed
// after the answer, from the staged file (objHashes).
type objHasher struct {
	queue  chan []byte
	exited chan struct{}
	stop   atomic.Bool

	mu    sync.Mutex
	moved *sync.Cond
	sum   hash.Hash // the goroutine's until it exited
	at    int64     // the upload's offset hashed to
	fed   int64     // the upload's offset fed to
	state []byte    // sum's state at at
	// failed is set when the durable bytes sum lacked could not be read
	// back: the hasher stays where it was.
	failed bool
}

// readStaged reads an upload's staged bytes at off (ReadStaged).
type readStaged func(p []byte, off int64) (int, error)

// hashChunk is how many bytes the hasher writes between two states, and
// between two looks at a stop.
const hashChunk = 64 << 10

// newObjHasher starts hashing after sum, the state at offset at, the
// bytes fed from offset durable on; it first hashes the durable bytes sum
// lacks (at below durable: a node that did not hash them) with read, on
// its goroutine, so the request's body need not wait for them. pieces is
// how many pieces may wait.
func newObjHasher(sum hash.Hash, at, durable int64, read readStaged, pieces int) (*objHasher, error) {
	state, err := marshalHash(sum)
	if err != nil {
		return nil, err
	}
	o := &objHasher{sum: sum, at: at, fed: durable, state: state,
		queue: make(chan []byte, pieces), exited: make(chan struct{})}
	o.moved = sync.NewCond(&o.mu)
	go o.loop(durable, read)
	return o, nil
}

func (o *objHasher) loop(durable int64, read readStaged) {
	defer close(o.exited)
	if o.at < durable {
		o.catchUp(durable, read)
	}
	for piece := range o.queue {
		o.hash(piece)
	}
}

// catchUp hashes the durable bytes up to end from the staged file.
func (o *objHasher) catchUp(end int64, read readStaged) {
	buf := make([]byte, min(hashChunk, end-o.at)) // a stop waits for one read
	for o.at < end && !o.stop.Load() {
		n, err := read(buf[:min(int64(len(buf)), end-o.at)], o.at)
		o.hash(buf[:n])
		if err != nil {
			o.mu.Lock()
			o.failed = true
			o.mu.Unlock()
			o.moved.Broadcast()
			return
		}
	}
}

// hash adds p to the state, publishing it every hashChunk bytes, until a
// stop or a failure.
func (o *objHasher) hash(p []byte) {
	for len(p) > 0 && !o.stop.Load() && !o.failed {
		k := min(len(p), hashChunk)
		o.sum.Write(p[:k])
		p = p[k:]
		state, _ := marshalHash(o.sum)
		o.mu.Lock()
		o.at += int64(k)
		o.state = state
		o.mu.Unlock()
		o.moved.Broadcast()
	}
}

// feed hashes p, the upload's next bytes, which must not change until
// drain or release returned.
func (o *objHasher) feed(p []byte) {
	if o == nil || len(p) == 0 {
		return
	}
	o.mu.Lock()
	o.fed += int64(len(p))
	o.mu.Unlock()
	o.queue <- p
}

// drain waits until every byte fed is hashed.
func (o *objHasher) drain() {
	if o == nil {
		return
	}
	o.mu.Lock()
	for o.at < o.fed && !o.failed {
		o.moved.Wait()
	}
	o.mu.Unlock()
}

// snapshot returns the offset hashed to and the state there.
func (o *objHasher) snapshot() (int64, []byte) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.at, o.state
}

// release stops the hashing after the chunk at hand, forgets the pieces
// waiting (their buffer may be reused once it returns), and returns the
// state and its offset, the caller's from now on.
func (o *objHasher) release() (int64, hash.Hash) {
	o.stop.Store(true)
	close(o.queue)
	<-o.exited
	return o.at, o.sum
}

func marshalHash(h hash.Hash) ([]byte, error) {
	return h.(encoding.BinaryMarshaler).MarshalBinary()
}

// hashedLen is how many bytes a marshalled SHA-256 state covers: its last
// eight bytes (crypto/sha256's format), 0 for no state.
func hashedLen(state []byte) int64 {
	if len(state) < 8 {
		return 0
	}
	return int64(binary.BigEndian.Uint64(state[len(state)-8:]))
}

// objHashes keeps, per staged upload, the SHA-256 that a request of this
// process left to hash when it answered, hashed after the answer from the
// staged file; the next request in the process takes it (objHash) rather
// than catch the record's state up from the file. It is the process's
// (hashes), not a Handler's: a surface may make a Handler per request
// (the /u/ endpoints), and staged ids are random, unique across stores. Bounded: at most
// maxHashJobs read at once (a request finding none free catches up before
// it answers), and at most maxHashStates are kept (a finished one makes
// room); none holds a request's buffer.
type objHashes struct {
	mu      sync.Mutex
	jobs    map[string]*hashJob // by staged id
	running int
}

// newObjSum makes an upload's SHA-256 (a test slows it down).
var newObjSum = sha256.New

// hashes is the process's objHashes: only a shortcut over the records'
// state, which every node reads.
var hashes objHashes

const (
	maxHashJobs   = 4
	maxHashStates = 256
	hashReadSize  = 1 << 20
)

// hashJob is the state of an upload's first target bytes once done is
// closed; sum is nil when hashing failed (the staged write went away).
type hashJob struct {
	done   chan struct{}
	target int64
	sum    hash.Hash
}

// take removes and returns the job of staged upload id, nil if none.
func (hs *objHashes) take(id string) *hashJob {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	job := hs.jobs[id]
	delete(hs.jobs, id)
	return job
}

// add keeps job as id's, unless one further on is kept or there is no
// room; run reports whether it may read (a slot of maxHashJobs, which
// finished gives back).
func (hs *objHashes) add(id string, job *hashJob, run bool) bool {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	if old := hs.jobs[id]; old != nil && old.target > job.target || run && hs.running >= maxHashJobs {
		return false
	}
	if hs.jobs == nil {
		hs.jobs = map[string]*hashJob{}
	}
	if len(hs.jobs) >= maxHashStates && hs.jobs[id] == nil && !hs.evictLocked() {
		return false
	}
	hs.jobs[id] = job
	if run {
		hs.running++
	}
	return true
}

// evictLocked drops one finished job.
func (hs *objHashes) evictLocked() bool {
	for id, job := range hs.jobs {
		select {
		case <-job.done:
			delete(hs.jobs, id)
			return true
		default:
		}
	}
	return false
}

func (hs *objHashes) finished() {
	hs.mu.Lock()
	hs.running--
	hs.mu.Unlock()
}

// handOff ends the request's hashing: what the hasher has not reached of
// the bytes committed is hashed from the staged file after the answer,
// and the state at the upload's offset kept for its next request here.
// Bytes hashed past the offset (a request refused, or cut under a
// checksum) leave nothing to keep.
func (a *appender) handOff() {
	o := a.obj
	if o == nil {
		return
	}
	a.obj = nil
	id, target := a.u.Staged, a.u.Offset
	job := &hashJob{done: make(chan struct{}), target: target}
	run := a.reader != nil && hashes.add(id, job, true)
	if !run {
		o.drain()
	}
	at, sum := o.release()
	if at == target {
		job.sum = sum
	}
	if run && at < target {
		go a.h.hashRest(job, id, sum, at)
		return
	}
	if run {
		hashes.finished()
	}
	close(job.done)
	if !run && job.sum != nil {
		hashes.add(id, job, false)
	}
}

// hashRest is a job's goroutine: it hashes the staged bytes from at to
// the job's target into sum.
func (h *Handler) hashRest(job *hashJob, id string, sum hash.Hash, at int64) {
	defer close(job.done)
	defer hashes.finished()
	if hashStaged(context.Background(), storage.StagedReaderOf(h.Stager), id, sum, at, job.target) != nil {
		return
	}
	job.sum = sum
}

// hashStaged adds the staged bytes from off to end to sum.
func hashStaged(ctx context.Context, r storage.StagedReader, id string, sum hash.Hash, off, end int64) error {
	buf := make([]byte, min(hashReadSize, end-off))
	for off < end {
		n, err := r.ReadStaged(ctx, id, off, buf[:min(int64(len(buf)), end-off)])
		sum.Write(buf[:n])
		off += int64(n)
		if err != nil {
			return err
		}
	}
	return nil
}

// objHash returns the SHA-256 of staged upload u's durable bytes (see
// objState), caught up from the staged file.
func (h *Handler) objHash(ctx context.Context, u *Upload) (hash.Hash, *Error) {
	sum, at, err := h.objState(u)
	if err != nil {
		return nil, err
	}
	if at < u.Offset {
		if err := hashStaged(ctx, storage.StagedReaderOf(h.Stager), u.Staged, sum, at, u.Offset); err != nil {
			return nil, storeError(err)
		}
	}
	return sum, nil
}

// objState returns a SHA-256 state of staged upload u's first at durable
// bytes: this node's of all of them, left by its last request, or the
// record's, which may cover fewer (a node that did not hash them: a
// restarted one), the rest to read back from the staged file.
func (h *Handler) objState(u *Upload) (hash.Hash, int64, *Error) {
	if job := hashes.take(u.Staged); job != nil {
		<-job.done
		if job.sum != nil && job.target == u.Offset {
			return job.sum, u.Offset, nil
		}
	}
	sum := newObjSum()
	if len(u.Hash) > 0 {
		if err := sum.(encoding.BinaryUnmarshaler).UnmarshalBinary(u.Hash); err != nil {
			return nil, 0, internal(err)
		}
	}
	at := hashedLen(u.Hash)
	if at < u.Offset && storage.StagedReaderOf(h.Stager) != nil || at == u.Offset {
		return sum, at, nil
	}
	return nil, 0, internal(fmt.Errorf("tus: upload %s: its SHA-256 state covers %d bytes of %d, and the store cannot read the rest back", u.ID, at, u.Offset))
}
