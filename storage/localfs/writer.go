package localfs

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path"
	"sync"
	"syscall"
	"time"

	"github.com/mcpblob/mcpblob/storage"
)

// Create starts a streaming write of key into a temporary file. See the
// package documentation for how Commit makes it visible.
func (s *Store) Create(ctx context.Context, key string, opts storage.CreateOptions) (storage.Writer, error) {
	w, err := s.create(ctx, key, opts)
	if err != nil {
		return nil, fmt.Errorf("localfs: create %q: %w", key, noSpace(err))
	}
	return w, nil
}

func (s *Store) create(ctx context.Context, key string, opts storage.CreateOptions) (*writer, error) {
	if err := checkKey(ctx, key); err != nil {
		return nil, err
	}
	opts, err := opts.Normalize()
	if err != nil {
		return nil, err
	}
	// Fail early when the key's path is taken by a folder of other objects,
	// or when one of its parents is an object.
	if fi, err := s.root.Lstat(key); err == nil && fi.IsDir() {
		return nil, s.keyConflict(key, syscall.EISDIR)
	} else if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, s.keyConflict(key, err)
	}
	tmp := tmpDir + "/" + rand.Text()
	f, err := s.root.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL, fileMode)
	if err != nil {
		return nil, err
	}
	return &writer{s: s, ctx: ctx, key: key, opts: opts, tmp: tmp, f: f, h: newHashPipe()}, nil
}

// writebackChunk is how many written bytes make Write start their
// writeback to the device (see startWriteback).
const writebackChunk = 8 << 20

// writer streams one upload into a temporary file.
type writer struct {
	s    *Store
	ctx  context.Context // Create's: bounds the whole write
	key  string
	opts storage.CreateOptions
	tmp  string // temporary file's name in the root

	mu      sync.Mutex
	f       *os.File // nil once closed
	h       *hashPipe
	n       int64
	wb      int64 // bytes handed to startWriteback so far
	dropped int64 // bytes written back and dropped from the page cache
	err     error // sticky failure of Write
	done    bool  // Commit or Abort called
}

// Write appends p to the upload, enforcing MaxSize and Size as bytes arrive.
func (w *writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case w.done:
		return 0, fmt.Errorf("localfs: write %q: %w", w.key, storage.ErrClosed)
	case w.err != nil:
		return 0, w.err
	}
	if err := w.ctx.Err(); err != nil {
		return 0, w.fail(err)
	}
	total := w.n + int64(len(p))
	if w.opts.MaxSize > 0 && total > w.opts.MaxSize {
		return 0, w.fail(fmt.Errorf("%w: more than %d bytes", storage.ErrTooLarge, w.opts.MaxSize))
	}
	if w.opts.Size > 0 && total > w.opts.Size {
		return 0, w.fail(fmt.Errorf("%w: more than the %d bytes declared", storage.ErrSizeMismatch, w.opts.Size))
	}
	w.h.begin(p)
	n, err := w.f.Write(p)
	w.h.wait()
	w.n += int64(n)
	if err != nil {
		return n, w.fail(err)
	}
	if w.n-w.wb >= writebackChunk {
		startWriteback(w.f, w.wb, w.n-w.wb)
		// The chunk before last has had a chunk's time to reach the disk.
		if w.wb >= writebackChunk {
			dropWritten(w.f, w.dropped, w.wb-w.dropped)
			w.dropped = w.wb
		}
		w.wb = w.n
	}
	return n, nil
}

// fail records a sticky Write error and discards the upload.
func (w *writer) fail(err error) error {
	w.err = fmt.Errorf("localfs: write %q: %w", w.key, noSpace(err))
	w.discard()
	return w.err
}

// discard closes and removes the temporary file, if it is still there.
func (w *writer) discard() {
	w.h.stop()
	if w.f != nil {
		w.f.Close()
		w.f = nil
	}
	if w.tmp != "" {
		w.s.root.Remove(w.tmp)
		w.tmp = ""
	}
}

// Written reports the number of bytes accepted so far.
func (w *writer) Written() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.n
}

// Abort discards the upload.
func (w *writer) Abort(context.Context) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.done {
		return fmt.Errorf("localfs: abort %q: %w", w.key, storage.ErrClosed)
	}
	w.done = true
	w.discard()
	return nil
}

// Commit makes the upload the visible version of the key.
func (w *writer) Commit(ctx context.Context) (storage.Info, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.done {
		return storage.Info{}, fmt.Errorf("localfs: commit %q: %w", w.key, storage.ErrClosed)
	}
	w.done = true
	if w.err != nil {
		return storage.Info{}, w.err
	}
	defer w.discard()
	info, err := w.commit(ctx, hex.EncodeToString(w.h.sum()))
	if err != nil {
		return storage.Info{}, fmt.Errorf("localfs: commit %q: %w", w.key, noSpace(err))
	}
	return info, nil
}

// noSpace marks an out-of-space or out-of-quota error of the file system
// with storage.ErrInsufficientStorage, keeping the errno in the chain.
func noSpace(err error) error {
	if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) {
		return fmt.Errorf("%w: %w", storage.ErrInsufficientStorage, err)
	}
	return err
}

// commit publishes the temporary file as the key's new version, whose
// SHA-256 is sha (hex).
func (w *writer) commit(ctx context.Context, sha string) (storage.Info, error) {
	if err := errors.Join(ctx.Err(), w.ctx.Err()); err != nil {
		return storage.Info{}, err
	}
	if w.opts.Size > 0 && w.n != w.opts.Size {
		return storage.Info{}, fmt.Errorf("%w: wrote %d of the %d bytes declared", storage.ErrSizeMismatch, w.n, w.opts.Size)
	}
	rec := &record{
		Size:      w.n,
		SHA256:    sha,
		MediaType: w.opts.MediaType,
		Filename:  w.opts.Filename,
		Expires:   expiresMillis(w.opts.Expires),
	}
	// The bulk of the fsync happens here, outside the key lock.
	if err := w.stamp(rec, time.Now()); err != nil {
		return storage.Info{}, err
	}
	mu := w.s.keyLock(w.key)
	mu.Lock()
	defer mu.Unlock()
	return w.publish(rec)
}

// stamp sets the temporary file's modification time to t, fsyncs it, and
// records the identity the file system reports back (it may round t).
func (w *writer) stamp(rec *record, t time.Time) error {
	if err := w.s.root.Chtimes(w.tmp, t, t); err != nil {
		return err
	}
	if err := w.f.Sync(); err != nil {
		return err
	}
	fi, err := w.f.Stat()
	if err != nil {
		return err
	}
	if fi.Size() != rec.Size {
		return fmt.Errorf("temporary file holds %d bytes, want %d", fi.Size(), rec.Size)
	}
	rec.MTime = fi.ModTime().UnixNano()
	return nil
}

// publish runs steps 2-5 of the commit protocol described in the package
// documentation. The caller holds the key lock.
func (w *writer) publish(rec *record) (storage.Info, error) {
	s, key := w.s, w.key
	var cur *record
	fi, err := s.root.Lstat(key)
	switch {
	case err == nil && fi.IsDir():
		return storage.Info{}, s.keyConflict(key, syscall.EISDIR)
	case err == nil && w.opts.IfNotExists:
		return storage.Info{}, storage.ErrExists
	case err == nil:
		m, err := s.readSidecar(key)
		if err != nil {
			return storage.Info{}, err
		}
		cur = m.match(fi)
	case !isNotExist(err):
		return storage.Info{}, s.keyConflict(key, err)
	}
	// Versions are told apart by (size, mtime): make sure the new one differs
	// from the current one even on a file system with coarse timestamps.
	for i := 0; cur != nil && cur.sameVersion(rec); i++ {
		if i == 3 {
			return storage.Info{}, errors.New("cannot give the new version a distinct modification time")
		}
		if err := w.stamp(rec, time.Unix(0, rec.MTime).Add(time.Second)); err != nil {
			return storage.Info{}, err
		}
	}
	if err := w.f.Close(); err != nil {
		return storage.Info{}, err
	}
	w.f = nil
	// Catch a parent that is an object before touching the metadata.
	if err := s.ensureDir(path.Dir(key)); err != nil {
		return storage.Info{}, s.keyConflict(key, err)
	}

	journal, err := s.writeJournal(key)
	if err != nil {
		return storage.Info{}, err
	}
	crashPoint("commit: journal written")
	m := &sidecar{Versions: []record{*rec}}
	if cur != nil {
		m.Versions = append(m.Versions, *cur)
	}
	err = s.writeSidecar(key, m)
	if err == nil {
		crashPoint("commit: sidecar replaced")
		err = s.place(w.tmp, key)
	}
	if err != nil {
		// The old version (or none) is still the visible one; drop the new
		// record so the sidecar describes only what is there.
		if rerr := s.reconcile(key); rerr == nil {
			s.root.Remove(journal)
		}
		return storage.Info{}, s.keyConflict(key, err)
	}
	w.tmp = ""
	s.index.added(key)
	crashPoint("commit: data renamed")
	if err := s.syncDir(path.Dir(key)); err != nil {
		// The new version is visible; only its durability is in doubt, and
		// the journal (left in place) repairs the metadata after a crash.
		s.log.Warn("localfs: fsync after commit failed", "key", key, "err", err)
		return rec.info(key), nil
	}
	s.root.Remove(journal)
	return rec.info(key), nil
}

// ensureDir creates dir (and its parents) unless it already is a directory.
func (s *Store) ensureDir(dir string) error {
	if dir == "." {
		return nil
	}
	if fi, err := s.root.Lstat(dir); err == nil && fi.IsDir() {
		return nil
	}
	return s.mkdirs(dir)
}
