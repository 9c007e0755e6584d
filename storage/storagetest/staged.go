package storagetest

import (
	"bytes"
	"context"
	"errors"
	"io"
	"testing"
	"testing/iotest"
	"time"

	"github.com/mcpblob/mcpblob/storage"
)

// stager returns b's Stager, and skips the test when b has none.
func stager(t *testing.T, b storage.Backend) storage.Stager {
	t.Helper()
	st := storage.StagerOf(b)
	if st == nil {
		t.Skipf("%T has no storage.Stager", b)
	}
	return st
}

// testStaged: a staged write is invisible until committed; its parts, in
// the order named, become the object with the caller's SHA-256, media
// type and filename; a part written and then replaced by a later number
// at the same offset (a writer another replaced) leaves no trace; a
// second commit finds it gone; Begin keeps Create's path rules; a refused
// commit (IfNotExists) leaves the staged write for an abort.
func (s Suite) testStaged(t *testing.T, b storage.Backend) {
	ctx := context.Background()
	st := stager(t, b)
	size := max(st.StagedPartMin(), 1000)
	one, two, last := content(1, int64(size)), content(2, int64(size)), content(3, 100)
	opts := storage.CreateOptions{MediaType: "text/plain", Filename: "notes.txt", Expires: time.Now().Add(time.Hour)}
	id, err := st.BeginStaged(ctx, "staged/obj", opts)
	if err != nil {
		t.Fatalf("BeginStaged: %v", err)
	}
	parts := []storage.StagedPart{putPart(t, st, id, 1, 0, one)}
	putPart(t, st, id, 2, int64(size), content(9, int64(size)+7)) // garbage: never named
	parts = append(parts, putPart(t, st, id, 3, int64(size), two), putPart(t, st, id, 4, int64(2*size), last))
	if _, err := b.Stat(ctx, "staged/obj"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("Stat before the commit: %v; want ErrNotFound", err)
	}
	want := bytes.Join([][]byte{one, two, last}, nil)
	info, err := st.CommitStaged(ctx, id, parts, opts, sum(want))
	if err != nil {
		t.Fatalf("CommitStaged: %v", err)
	}
	if info.Size != int64(len(want)) || info.SHA256 != sum(want) || info.Key != "staged/obj" {
		t.Fatalf("CommitStaged's Info %+v", info)
	}
	wantStaged(t, b, "staged/obj", want, opts)
	// S3 completes a completed upload again (the same object).
	if _, err = st.CommitStaged(ctx, id, parts, opts, sum(want)); err != nil {
		wantErr(t, "second CommitStaged", err, storage.ErrStagedGone)
	}
	wantStaged(t, b, "staged/obj", want, opts)
	_, err = st.BeginStaged(ctx, "staged/obj/child", opts)
	wantErr(t, "BeginStaged below an object", err, storage.ErrPathConflict)
	s.testStagedRefused(t, b, st)
	if ss := storage.StreamerOf(st); ss != nil {
		testStreamed(t, b, st, ss)
	}
	if ss := storage.SenderOf(st); ss != nil {
		testSent(t, b, st, ss)
	}
}

// testSent (a store with a StagedSender): parts sent from a reader that
// gives their bytes in pieces become the object as PutStaged's do; a
// reader that ends early stores no part, and its number is sent again.
func testSent(t *testing.T, b storage.Backend, st storage.Stager, ss storage.StagedSender) {
	ctx := context.Background()
	one, two := content(7, int64(st.StagedPartMin())+1234), content(8, 3000)
	id, err := st.BeginStaged(ctx, "staged/sent", storage.CreateOptions{})
	if err != nil {
		t.Fatalf("BeginStaged: %v", err)
	}
	p1, err := ss.SendStaged(ctx, id, 1, 0, int64(len(one)), iotest.HalfReader(bytes.NewReader(one)))
	if err != nil || p1.Number != 1 || p1.Size != int64(len(one)) {
		t.Fatalf("SendStaged(1) = %+v, %v", p1, err)
	}
	cut := bytes.NewReader(two[:1000])
	if p, err := ss.SendStaged(ctx, id, 2, int64(len(one)), int64(len(two)), cut); err == nil {
		t.Fatalf("SendStaged of a reader ending after 1000 of %d bytes = %+v, no error", len(two), p)
	}
	p2, err := ss.SendStaged(ctx, id, 2, int64(len(one)), int64(len(two)), iotest.OneByteReader(bytes.NewReader(two[:10])))
	if err == nil {
		t.Fatalf("SendStaged of 10 of %d bytes = %+v, no error", len(two), p2)
	}
	if p2, err = ss.SendStaged(ctx, id, 2, int64(len(one)), int64(len(two)), bytes.NewReader(two)); err != nil {
		t.Fatalf("SendStaged(2): %v", err)
	}
	want := append(bytes.Clone(one), two...)
	if _, err := st.CommitStaged(ctx, id, []storage.StagedPart{p1, p2}, storage.CreateOptions{}, sum(want)); err != nil {
		t.Fatalf("CommitStaged: %v", err)
	}
	wantStaged(t, b, "staged/sent", want, storage.CreateOptions{})
}

// testStreamed (a store with a StagedStreamer): parts written in pieces
// and synced become the object as PutStaged's do; a piece of a writer
// another replaced (a lower number) is refused, as is a claim (a store
// with claims) of a number not above those claimed or written; bytes
// streamed and never synced are cut by the next part; a sync past the
// bytes written fails.
func testStreamed(t *testing.T, b storage.Backend, st storage.Stager, ss storage.StagedStreamer) {
	ctx := context.Background()
	one, two := content(5, 3000), content(6, 2500)
	id, err := st.BeginStaged(ctx, "staged/streamed", storage.CreateOptions{})
	if err != nil {
		t.Fatalf("BeginStaged: %v", err)
	}
	stream := func(n int, off int64, data []byte, piece int) {
		t.Helper()
		for i := 0; i < len(data); i += piece {
			if err := ss.WriteStaged(ctx, id, n, off+int64(i), data[i:min(i+piece, len(data))]); err != nil {
				t.Fatalf("WriteStaged(%d) at %d: %v", n, off+int64(i), err)
			}
		}
	}
	stream(1, 0, one, 1000)
	p1, err := ss.SyncStaged(ctx, id, 1, 0, int64(len(one)))
	if err != nil || p1.Number != 1 || p1.Size != int64(len(one)) {
		t.Fatalf("SyncStaged(1) = %+v, %v", p1, err)
	}
	stream(2, int64(len(one)), content(9, 4000), 1500) // garbage: never synced or named
	stream(3, int64(len(one)), two, 999)
	err = ss.WriteStaged(ctx, id, 2, int64(len(one)+len(two)), []byte("stale"))
	wantErr(t, "WriteStaged of a replaced writer", err, storage.ErrPreconditionFailed)
	if _, err := ss.SyncStaged(ctx, id, 3, int64(len(one)), int64(len(two))+1); err == nil {
		t.Fatal("SyncStaged past the bytes written: no error")
	}
	p3, err := ss.SyncStaged(ctx, id, 3, int64(len(one)), int64(len(two)))
	if err != nil {
		t.Fatalf("SyncStaged(3): %v", err)
	}
	if sc := storage.ClaimerOf(st); sc != nil {
		if err := sc.ClaimStaged(ctx, id, 5); err != nil {
			t.Fatalf("ClaimStaged(5): %v", err)
		}
		wantErr(t, "ClaimStaged of a number claimed", sc.ClaimStaged(ctx, id, 5), storage.ErrPreconditionFailed)
		wantErr(t, "ClaimStaged below a number claimed", sc.ClaimStaged(ctx, id, 4), storage.ErrPreconditionFailed)
		err := ss.WriteStaged(ctx, id, 4, int64(len(one)+len(two)), []byte("stale"))
		wantErr(t, "WriteStaged below a number claimed", err, storage.ErrPreconditionFailed)
	}
	want := append(bytes.Clone(one), two...)
	if _, err := st.CommitStaged(ctx, id, []storage.StagedPart{p1, p3}, storage.CreateOptions{}, sum(want)); err != nil {
		t.Fatalf("CommitStaged: %v", err)
	}
	wantStaged(t, b, "staged/streamed", want, storage.CreateOptions{})
}

// testStagedRefused: a commit refused by IfNotExists leaves the object as
// it was and the staged write abortable; an aborted one takes no parts;
// a staged write of no parts commits an empty object.
func (s Suite) testStagedRefused(t *testing.T, b storage.Backend, st storage.Stager) {
	ctx := context.Background()
	data := content(4, 10)
	id, err := st.BeginStaged(ctx, "staged/obj", storage.CreateOptions{})
	if err != nil {
		t.Fatalf("BeginStaged: %v", err)
	}
	parts := []storage.StagedPart{putPart(t, st, id, 1, 0, data)}
	_, err = st.CommitStaged(ctx, id, parts, storage.CreateOptions{IfNotExists: true}, sum(data))
	wantErr(t, "CommitStaged with IfNotExists over an object", err, storage.ErrExists)
	if err := st.AbortStaged(ctx, id); err != nil {
		t.Fatalf("AbortStaged: %v", err)
	}
	if err := st.AbortStaged(ctx, id); err != nil {
		t.Fatalf("second AbortStaged: %v", err)
	}
	_, err = st.PutStaged(ctx, id, 2, 10, data)
	wantErr(t, "PutStaged after AbortStaged", err, storage.ErrStagedGone)
	id, err = st.BeginStaged(ctx, "staged/empty", storage.CreateOptions{})
	if err != nil {
		t.Fatalf("BeginStaged: %v", err)
	}
	if _, err := st.CommitStaged(ctx, id, nil, storage.CreateOptions{}, sum(nil)); err != nil {
		t.Fatalf("CommitStaged of no parts: %v", err)
	}
	wantStaged(t, b, "staged/empty", nil, storage.CreateOptions{})
}

func putPart(t *testing.T, st storage.Stager, id string, n int, off int64, data []byte) storage.StagedPart {
	t.Helper()
	p, err := st.PutStaged(context.Background(), id, n, off, data)
	if err != nil || p.Number != n || p.Size != int64(len(data)) {
		t.Fatalf("PutStaged(%d) = %+v, %v", n, p, err)
	}
	return p
}

func wantStaged(t *testing.T, b storage.Backend, key string, want []byte, opts storage.CreateOptions) {
	t.Helper()
	rc, info, err := b.Open(context.Background(), key, nil)
	if err != nil {
		t.Fatalf("Open(%s): %v", key, err)
	}
	defer rc.Close()
	got, err := io.ReadAll(rc)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("Open(%s): %d bytes, %v; want the %d staged", key, len(got), err, len(want))
	}
	if info.SHA256 != sum(want) || opts.Filename != info.Filename || opts.MediaType != "" && info.MediaType != opts.MediaType ||
		expiresMillis(info.Expires) != expiresMillis(opts.Expires) {
		t.Fatalf("Open(%s)'s Info %+v; want SHA-256 %s, options %+v", key, info, sum(want), opts)
	}
}

// RunStaged runs the staged-write tests alone (Run runs them too), for
// the variants of a store whose staged writes take another path.
func (s Suite) RunStaged(t *testing.T) {
	t.Run("Staged", func(t *testing.T) { s.testStaged(t, s.backend(t)) })
}
