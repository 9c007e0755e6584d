package tus

import (
	"context"
	"crypto/sha256"
	"encoding"
	"hash"
	"net/http"
	"slices"
	"sync/atomic"
	"testing"
	"time"
)

type hashState interface {
	hash.Hash
	encoding.BinaryMarshaler
	encoding.BinaryUnmarshaler
}

// heldSum is a SHA-256 whose every Write first calls hold.
type heldSum struct {
	hashState
	hold func()
}

func (s heldSum) Write(p []byte) (int, error) {
	s.hold()
	return s.hashState.Write(p)
}

// holdHashing makes the uploads' SHA-256 call hold before each Write,
// until the test ends.
func holdHashing(t *testing.T, hold func()) {
	newObjSum = func() hash.Hash { return heldSum{sha256.New().(hashState), hold} }
	t.Cleanup(func() { newObjSum = sha256.New })
}

// recordOf reads upload id's record.
func recordOf(t *testing.T, h *Handler, id string) *Upload {
	t.Helper()
	u, err := h.load(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// TestAnswerBeforeHash: a PATCH on the local store answers once its bytes
// are durable, before they are hashed. Here the hashing stays behind the
// bytes until the PATCH's record is written, and what is left is read
// back from the staged file only after the answer (a read held until the
// PATCH answered): the record names 2 segments' bytes with a SHA-256
// state covering fewer, and a HEAD reports them. The completing PATCH
// catches the hashing up, and the object's SHA-256 is the bytes' own.
func TestAnswerBeforeHash(t *testing.T) {
	seg := DefaultSegmentSize
	b := openLocal(t, t.TempDir())
	c := countStore(b)
	c.readGate = make(chan struct{})
	var until atomic.Int64 // record writes the hashing waits for
	holdHashing(t, func() {
		for c.records.Load() < until.Load() {
			time.Sleep(100 * time.Microsecond)
		}
	})
	h := storeHandler(c)
	data := randomBytes(3*seg+7, 9)
	id := createOn(t, h, len(data), "held")
	until.Store(c.records.Load() + 1) // the PATCH's
	wantStatus(t, "PATCH 1", patchOn(h, id, 0, data[:seg]), http.StatusNoContent)
	if u := recordOf(t, h, id); hashedLen(u.Hash) != 0 || u.Offset != int64(seg) {
		t.Fatalf("after PATCH 1: record at %d with a SHA-256 state of %d bytes; want %d and 0 (hashing held)", u.Offset, hashedLen(u.Hash), seg)
	}
	until.Store(c.records.Load() + 1)
	wantStatus(t, "PATCH 2", patchOn(h, id, seg, data[seg:2*seg]), http.StatusNoContent)
	u := recordOf(t, h, id)
	if u.Offset != int64(2*seg) || hashedLen(u.Hash) >= u.Offset {
		t.Fatalf("after PATCH 2: record at %d with a SHA-256 state of %d bytes; want %d and fewer", u.Offset, hashedLen(u.Hash), 2*seg)
	}
	if off := headOffset(t, h, id); off != 2*seg {
		t.Fatalf("HEAD: offset %d, want %d", off, 2*seg)
	}
	close(c.readGate)
	wantStatus(t, "PATCH 3", patchOn(h, id, 2*seg, data[2*seg:]), http.StatusNoContent)
	wantObject(t, b, "held", data)
}

// TestHashCatchesUpOnAnotherNode: a record whose SHA-256 state covers
// fewer bytes than its offset (its node answered and stopped before it
// hashed the rest) is caught up from the staged file by a node that did
// not hash them, at its next PATCH or at completion; the object's SHA-256
// is the bytes' own.
func TestHashCatchesUpOnAnotherNode(t *testing.T) {
	seg := DefaultSegmentSize
	for _, tc := range []struct {
		name string
		at   int // the bytes the state covers
	}{{"none", 0}, {"some", seg/2 + 3}, {"a segment", seg}} {
		t.Run(tc.name, func(t *testing.T) {
			b := openLocal(t, t.TempDir())
			h := storeHandler(countStore(b))
			data := randomBytes(3*seg+11, 5)
			id := createOn(t, h, len(data), "lagging")
			wantStatus(t, "PATCH 1", patchOn(h, id, 0, data[:2*seg]), http.StatusNoContent)
			u := recordOf(t, h, id)
			hashes.take(u.Staged) // the node that hashed is gone
			lagging := sha256.New()
			lagging.Write(data[:tc.at])
			u.Hash, _ = lagging.(encoding.BinaryMarshaler).MarshalBinary()
			if err := h.save(context.Background(), u); err != nil {
				t.Fatal(err)
			}
			other := storeHandler(countStore(b))
			wantStatus(t, "PATCH 2", patchOn(other, id, 2*seg, data[2*seg:3*seg]), http.StatusNoContent)
			hashes.take(u.Staged)
			wantStatus(t, "PATCH 3", patchOn(storeHandler(countStore(b)), id, 3*seg, data[3*seg:]), http.StatusNoContent)
			wantObject(t, b, "lagging", data)
		})
	}
}

// TestHashedLen: the bytes a marshalled state covers are read from it.
func TestHashedLen(t *testing.T) {
	for _, n := range []int{0, 1, 63, 64, 65, 1<<20 + 5} {
		s := sha256.New()
		s.Write(make([]byte, n))
		state, _ := s.(encoding.BinaryMarshaler).MarshalBinary()
		if got := hashedLen(state); got != int64(n) {
			t.Errorf("hashedLen after %d bytes: %d", n, got)
		}
	}
	if hashedLen(nil) != 0 {
		t.Error("hashedLen(nil) != 0")
	}
}

// TestHashJobsBounded: at most maxHashJobs jobs read at once, and at most
// maxHashStates states are kept, a finished one making room for a new one;
// a job does not replace one further on.
func TestHashJobsBounded(t *testing.T) {
	var hs objHashes
	job := func(target int64) *hashJob { return &hashJob{done: make(chan struct{}), target: target} }
	for i := range maxHashJobs {
		if !hs.add(string(rune('a'+i)), job(1), true) {
			t.Fatalf("job %d refused", i)
		}
	}
	if hs.add("z", job(1), true) {
		t.Fatalf("job %d accepted", maxHashJobs+1)
	}
	hs.finished()
	if !hs.add("z", job(1), true) {
		t.Fatal("a job refused after one finished")
	}
	if hs.add("z", job(0), false) {
		t.Fatal("a state replaced one further on")
	}
	hs = objHashes{}
	for i := range maxHashStates {
		if !hs.add(string(rune(i+1)), job(1), false) {
			t.Fatalf("state %d refused", i)
		}
	}
	if hs.add("new", job(1), false) {
		t.Fatal("a state added with every kept one unfinished")
	}
	close(hs.jobs[string(rune(7))].done)
	if !hs.add("new", job(1), false) || len(hs.jobs) != maxHashStates {
		t.Fatalf("a state refused with a finished one kept (%d kept)", len(hs.jobs))
	}
}

// TestTailPieces: a streamed part goes to the store in pieces of
// streamPiece bytes but its last streamPiece bytes, which go in pieces of
// tailPiece, so little is left to write after the body's last byte.
func TestTailPieces(t *testing.T) {
	c := countStore(openLocal(t, t.TempDir()))
	var sizes []int
	c.onPiece = func(n int) { sizes = append(sizes, n) } // one writer goroutine
	h := storeHandler(c)
	seg := DefaultSegmentSize
	id := createOn(t, h, seg+streamPiece/2, "pieces")
	data := randomBytes(seg+streamPiece/2, 3)
	wantStatus(t, "PATCH", patchOn(h, id, 0, data), http.StatusNoContent)
	var want []int
	for range seg/streamPiece - 1 {
		want = append(want, streamPiece)
	}
	for range streamPiece / tailPiece {
		want = append(want, tailPiece)
	}
	for range streamPiece / 2 / tailPiece {
		want = append(want, tailPiece)
	}
	if !slices.Equal(sizes, want) {
		t.Fatalf("pieces written: %v, want %v", sizes, want)
	}
}

// TestCatchUpBesideTheBody: a node that finds the record's SHA-256 state
// behind the offset (a restarted one) hashes the rest from the staged file
// beside the PATCH's body, not before it: with the file's reads held until
// the PATCH's record is written, the PATCH is answered, its record's state
// still covering none of the bytes; the completing PATCH stores the bytes'
// SHA-256.
func TestCatchUpBesideTheBody(t *testing.T) {
	seg := DefaultSegmentSize
	b := openLocal(t, t.TempDir())
	h := storeHandler(countStore(b))
	data := randomBytes(3*seg+5, 8)
	id := createOn(t, h, len(data), "beside")
	wantStatus(t, "PATCH 1", patchOn(h, id, 0, data[:seg]), http.StatusNoContent)
	u := recordOf(t, h, id)
	hashes.take(u.Staged) // the node that hashed is gone
	u.Hash = nil
	if err := h.save(context.Background(), u); err != nil {
		t.Fatal(err)
	}
	c := countStore(b)
	c.readHold = func() {
		for c.records.Load() < 1 { // PATCH 2's
			time.Sleep(100 * time.Microsecond)
		}
	}
	restarted := storeHandler(c)
	wantStatus(t, "PATCH 2", patchOn(restarted, id, seg, data[seg:2*seg]), http.StatusNoContent)
	if u := recordOf(t, h, id); u.Offset != int64(2*seg) || hashedLen(u.Hash) != 0 {
		t.Fatalf("after PATCH 2: record at %d with a SHA-256 state of %d bytes; want %d and 0", u.Offset, hashedLen(u.Hash), 2*seg)
	}
	wantStatus(t, "PATCH 3", patchOn(restarted, id, 2*seg, data[2*seg:]), http.StatusNoContent)
	wantObject(t, b, "beside", data)
}
