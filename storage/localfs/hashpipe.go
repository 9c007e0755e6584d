package localfs

import (
	"crypto/sha256"
	"hash"
)

// parallelHashMin is the smallest Write whose hashing runs beside the file
// write rather than after it.
const parallelHashMin = 64 << 10

// hashPipe is the running SHA-256 of an upload. Large writes are hashed on
// a goroutine of its own while the caller copies the same bytes into the
// file, so an upload costs about max(hash, write) rather than their sum.
type hashPipe struct {
	h       hash.Hash
	in      chan []byte   // nil until the first large write
	done    chan struct{} // a value per chunk taken from in
	pending bool          // a chunk is being hashed
}

func newHashPipe() *hashPipe { return &hashPipe{h: sha256.New()} }

// begin starts hashing p and may return before it is done: p must not change
// until wait returns.
func (hp *hashPipe) begin(p []byte) {
	if len(p) < parallelHashMin {
		hp.h.Write(p)
		return
	}
	if hp.in == nil {
		hp.in, hp.done = make(chan []byte), make(chan struct{})
		go func(in <-chan []byte, done chan<- struct{}) {
			for b := range in {
				hp.h.Write(b)
				done <- struct{}{}
			}
		}(hp.in, hp.done)
	}
	hp.in <- p
	hp.pending = true
}

// wait returns once the bytes of the last begin are hashed.
func (hp *hashPipe) wait() {
	if hp.pending {
		<-hp.done
		hp.pending = false
	}
}

// sum returns the SHA-256 (raw bytes) of everything hashed.
func (hp *hashPipe) sum() []byte {
	hp.wait()
	return hp.h.Sum(nil)
}

// stop ends the hashing goroutine, if there is one.
func (hp *hashPipe) stop() {
	hp.wait()
	if hp.in != nil {
		close(hp.in)
		hp.in = nil
	}
}
