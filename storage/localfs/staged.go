package localfs

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/mcpblob/mcpblob/storage"
)

var (
	_ storage.Stager         = (*Store)(nil)
	_ storage.StagedStreamer = (*Store)(nil)
	_ storage.StagedClaimer  = (*Store)(nil)
	_ storage.StagedReader   = (*Store)(nil)
)

// stagedDir holds staged writes, one file each. Unlike tmpDir it survives
// a restart: a staged write outlives the process that began it.
const stagedDir = storage.ReservedDir + "/staged"

// stagedWriters orders the part writes of each staged file: one at a
// time, and none numbered below the highest taken (its writer was replaced
// by a later one, which cut the file at its offset). The Store is the
// folder's only writer (its lock), so this is exact; after a restart no
// writer from before is left.
type stagedWriters struct {
	mu    sync.Mutex
	files map[string]*stagedFile
	kept  atomic.Int64 // files kept open between pieces, all staged files together
}

// maxKeptStaged bounds the staged files kept open between a part's pieces:
// a request cut in the middle of a part leaves its file kept until the
// upload's next part, its commit or its sweep, so without a bound uploads
// abandoned mid-part would hold a descriptor each. Past it a piece's file
// is closed after the piece, as before.
const maxKeptStaged = 64

type stagedFile struct {
	mu   sync.Mutex
	top  int           // highest part number taken
	open *atomic.Int64 // stagedWriters.kept
	// kept is the file open for part keptFor while WriteStaged streams it,
	// until its SyncStaged: one open per part, not per piece.
	kept    *os.File
	keptFor int
}

// closeKept closes the file kept open, if any; f.mu is held.
func (f *stagedFile) closeKept() {
	if k := f.unkeep(); k != nil {
		k.Close()
	}
}

// unkeep returns the file kept open (nil if none) and no longer keeps it;
// f.mu is held.
func (f *stagedFile) unkeep() *os.File {
	k := f.kept
	if k != nil {
		f.kept, f.keptFor = nil, 0
		f.open.Add(-1)
	}
	return k
}

// keep keeps k open for part number, or closes it when maxKeptStaged files
// are kept already; f.mu is held and f keeps none.
func (f *stagedFile) keep(k *os.File, number int) {
	if f.open.Add(1) > maxKeptStaged {
		f.open.Add(-1)
		k.Close()
		return
	}
	f.kept, f.keptFor = k, number
}

// file returns the writes of file.
func (w *stagedWriters) file(file string) *stagedFile {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.files == nil {
		w.files = map[string]*stagedFile{}
	}
	f := w.files[file]
	if f == nil {
		f = &stagedFile{open: &w.kept}
		w.files[file] = f
	}
	return f
}

// claim takes part number of file for one writer: it must be above every
// number taken before.
func (w *stagedWriters) claim(file string, number int) error {
	f := w.file(file)
	f.mu.Lock()
	defer f.mu.Unlock()
	if number <= f.top {
		return fmt.Errorf("part %d is not above part %d, claimed or written before: %w", number, f.top, storage.ErrPreconditionFailed)
	}
	f.top = number
	return nil
}

// take locks file's writes for part number (the caller unlocks f.mu), or
// refuses a stale writer.
func (w *stagedWriters) take(file string, number int) (*stagedFile, error) {
	f := w.file(file)
	f.mu.Lock()
	if top := f.top; number < top {
		f.mu.Unlock()
		return nil, fmt.Errorf("part %d is below part %d, written since: %w", number, top, storage.ErrPreconditionFailed)
	}
	f.top = number
	return f, nil
}

func (w *stagedWriters) forget(file string) {
	w.mu.Lock()
	f := w.files[file]
	delete(w.files, file)
	w.mu.Unlock()
	if f != nil {
		f.mu.Lock()
		f.closeKept()
		f.mu.Unlock()
	}
}

// A staged write's id is its file's name and the key, joined by ':'.
func stagedID(name, key string) string { return name + ":" + key }

func parseStagedID(id string) (file, key string, err error) {
	name, key, ok := strings.Cut(id, ":")
	if !ok || name == "" || strings.ContainsAny(name, "/.") || storage.ValidateKey(key) != nil {
		return "", "", fmt.Errorf("%w: staged id %q", storage.ErrStagedGone, id)
	}
	return stagedDir + "/" + name, key, nil
}

// BeginStaged creates the staged write's file, empty, and syncs its folder.
func (s *Store) BeginStaged(ctx context.Context, key string, opts storage.CreateOptions) (string, error) {
	if err := checkKey(ctx, key); err != nil {
		return "", fmt.Errorf("localfs: begin staged %q: %w", key, err)
	}
	if _, err := opts.Normalize(); err != nil {
		return "", fmt.Errorf("localfs: begin staged %q: %w", key, err)
	}
	if fi, err := s.root.Lstat(key); err == nil && fi.IsDir() {
		return "", fmt.Errorf("localfs: begin staged %q: %w", key, s.keyConflict(key, syscall.EISDIR))
	} else if err != nil && !errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("localfs: begin staged %q: %w", key, s.keyConflict(key, err))
	}
	name := rand.Text()
	if err := s.root.MkdirAll(stagedDir, dirMode); err != nil {
		return "", fmt.Errorf("localfs: begin staged %q: %w", key, noSpace(err))
	}
	if err := s.writeFile(stagedDir+"/"+name, nil); err != nil {
		return "", fmt.Errorf("localfs: begin staged %q: %w", key, noSpace(err))
	}
	if err := s.syncDir(stagedDir); err != nil {
		return "", fmt.Errorf("localfs: begin staged %q: %w", key, err)
	}
	return stagedID(name, key), nil
}

// StagedPartMin is 1: the file takes parts of any size.
func (s *Store) StagedPartMin() int { return 1 }

// PutStaged cuts the file at offset (dropping a torn or unnamed tail),
// writes data there and syncs it (writeDurable).
func (s *Store) PutStaged(ctx context.Context, id string, number int, offset int64, data []byte) (storage.StagedPart, error) {
	part, err := s.putStaged(ctx, id, number, offset, data)
	if err != nil {
		return storage.StagedPart{}, fmt.Errorf("localfs: put staged part %d: %w", number, noSpace(err))
	}
	part.Number = number
	return part, nil
}

func (s *Store) putStaged(ctx context.Context, id string, number int, offset int64, data []byte) (storage.StagedPart, error) {
	f, done, err := s.openPart(ctx, id, number, offset, offset, false)
	if err != nil {
		return storage.StagedPart{}, err
	}
	defer done()
	if err := writeDurable(f, offset, data); err != nil {
		return storage.StagedPart{}, err
	}
	return storage.StagedPart{Size: int64(len(data))}, nil
}

// ClaimStaged claims part number of the staged write for one writer (see
// stagedWriters): the Store is the folder's only writer, so the claim is
// exact in memory, and after a restart no writer from before is left.
func (s *Store) ClaimStaged(ctx context.Context, id string, number int) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	file, _, err := parseStagedID(id)
	if err == nil {
		err = s.staged.claim(file, number)
	}
	if err != nil {
		return fmt.Errorf("localfs: claim staged part %d: %w", number, err)
	}
	return nil
}

// WriteStaged cuts the file at offset and writes data there, starting
// its writeback; SyncStaged makes it durable.
func (s *Store) WriteStaged(ctx context.Context, id string, number int, offset int64, data []byte) error {
	f, done, err := s.openPart(ctx, id, number, offset, offset, true)
	if err != nil {
		return fmt.Errorf("localfs: write staged part %d: %w", number, noSpace(err))
	}
	defer done()
	if _, err := f.WriteAt(data, offset); err != nil {
		return fmt.Errorf("localfs: write staged part %d: %w", number, noSpace(err))
	}
	startWriteback(f, offset, int64(len(data)))
	return nil
}

// SyncStaged cuts the file past the part written by WriteStaged and syncs
// it.
func (s *Store) SyncStaged(ctx context.Context, id string, number int, offset, size int64) (storage.StagedPart, error) {
	f, done, err := s.openPart(ctx, id, number, offset, offset+size, false)
	if err != nil {
		return storage.StagedPart{}, fmt.Errorf("localfs: sync staged part %d: %w", number, noSpace(err))
	}
	defer done()
	if err := syncData(f); err != nil {
		return storage.StagedPart{}, fmt.Errorf("localfs: sync staged part %d: %w", number, noSpace(err))
	}
	dropWritten(f, offset, size)
	return storage.StagedPart{Number: number, Size: size}, nil
}

// ReadStaged reads len(p) bytes of the staged file at offset. It takes
// no part's lock: the bytes below an upload's durable offset do not
// change (a writer cuts the file at its part's offset, past them).
func (s *Store) ReadStaged(ctx context.Context, id string, offset int64, p []byte) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	file, _, err := parseStagedID(id)
	if err != nil {
		return 0, fmt.Errorf("localfs: read staged: %w", err)
	}
	f, err := s.openBelow(file, os.O_RDONLY)
	if isNotExist(err) {
		return 0, fmt.Errorf("localfs: read staged: %w", storage.ErrStagedGone)
	} else if err != nil {
		return 0, fmt.Errorf("localfs: read staged: %w", err)
	}
	defer f.Close()
	n, err := f.ReadAt(p, offset)
	if err != nil {
		return n, fmt.Errorf("localfs: read staged at %d: %w", offset, err)
	}
	return n, nil
}

// openPart opens the staged file of id for part number, which starts at
// offset, with the part's writes locked, and cuts it at end: the file
// must hold end bytes. done unlocks, and closes the file unless keep: a
// part streamed by WriteStaged keeps it open for its next pieces and its
// SyncStaged (which closes it).
func (s *Store) openPart(ctx context.Context, id string, number int, offset, end int64, keep bool) (f *os.File, done func(), err error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	file, _, err := parseStagedID(id)
	if err != nil {
		return nil, nil, err
	}
	sf, err := s.staged.take(file, number)
	if err != nil {
		return nil, nil, err
	}
	if f, err = s.keptOpen(sf, file, number); err != nil {
		sf.mu.Unlock()
		if isNotExist(err) {
			return nil, nil, storage.ErrStagedGone
		}
		return nil, nil, err
	}
	done = func() {
		if keep {
			sf.keep(f, number)
		} else {
			f.Close()
		}
		sf.mu.Unlock()
	}
	if err := cutAt(f, end); err != nil {
		done()
		return nil, nil, err
	}
	return f, done, nil
}

// keptOpen returns the file sf keeps open for part number (and forgets
// it), else opens it; sf.mu is held.
func (s *Store) keptOpen(sf *stagedFile, file string, number int) (*os.File, error) {
	if sf.kept != nil && sf.keptFor == number {
		return sf.unkeep(), nil
	}
	sf.closeKept() // a stale part's
	return s.openBelow(file, os.O_WRONLY)
}

// openBelow opens the existing file name with flag (os.O_RDONLY,
// os.O_WRONLY or os.O_RDWR): in one openat2 call where it is available,
// else through the Store's os.Root, which walks the path one folder at a
// time (a part's pieces, and a record read at each PATCH, open a file
// several times per request).
func (s *Store) openBelow(name string, flag int) (*os.File, error) {
	if s.beneath != nil {
		return s.beneath.openFile(name, flag)
	}
	return s.root.OpenFile(name, flag, 0)
}

// cutAt cuts f at end, which it must reach.
func cutAt(f *os.File, end int64) error {
	fi, err := f.Stat()
	switch {
	case err != nil:
		return err
	case fi.Size() < end:
		return fmt.Errorf("staged file holds %d bytes, below the offset %d", fi.Size(), end)
	case fi.Size() > end:
		return f.Truncate(end)
	}
	return nil
}

// stagedPiece is how many bytes of a part writeDurable writes before it
// starts their writeback.
const stagedPiece = 1 << 20

// writeDurable writes data at offset of f and makes it durable. The
// writeback of each piece starts as soon as it is written, so the disk
// works while the next pieces are copied and the closing fdatasync has
// little left to do: one write of the whole part followed by fdatasync
// leaves every byte to the fdatasync, several times slower. The part's
// pages, clean once synced, leave the page cache.
func writeDurable(f *os.File, offset int64, data []byte) error {
	for i := 0; i < len(data); i += stagedPiece {
		piece := data[i:min(i+stagedPiece, len(data))]
		if _, err := f.WriteAt(piece, offset+int64(i)); err != nil {
			return err
		}
		startWriteback(f, offset+int64(i), int64(len(piece)))
	}
	if err := syncData(f); err != nil {
		return err
	}
	dropWritten(f, offset, int64(len(data)))
	return nil
}

// CommitStaged cuts the file to the parts' total and publishes it as a
// Writer's commit does (sidecar, journal, rename): the bytes are not
// copied.
func (s *Store) CommitStaged(ctx context.Context, id string, parts []storage.StagedPart, opts storage.CreateOptions, sha string) (storage.Info, error) {
	file, key, err := parseStagedID(id)
	if err != nil {
		return storage.Info{}, fmt.Errorf("localfs: commit staged: %w", err)
	}
	info, err := s.commitStaged(ctx, file, key, storage.StagedSize(parts), opts, sha)
	if err == nil {
		s.staged.forget(file)
	}
	if err != nil {
		return storage.Info{}, fmt.Errorf("localfs: commit staged %q: %w", key, noSpace(err))
	}
	return info, nil
}

func (s *Store) commitStaged(ctx context.Context, file, key string, size int64, opts storage.CreateOptions, sha string) (storage.Info, error) {
	if err := checkKey(ctx, key); err != nil {
		return storage.Info{}, err
	}
	opts, err := opts.Normalize()
	if err != nil {
		return storage.Info{}, err
	}
	f, err := s.root.OpenFile(file, os.O_RDWR, fileMode)
	if isNotExist(err) {
		return storage.Info{}, storage.ErrStagedGone
	} else if err != nil {
		return storage.Info{}, err
	}
	w := &writer{s: s, ctx: ctx, key: key, opts: opts, tmp: file, f: f, n: size}
	defer func() {
		if w.f != nil {
			w.f.Close()
		}
	}()
	fi, err := f.Stat()
	switch {
	case err != nil:
		return storage.Info{}, err
	case fi.Size() < size:
		return storage.Info{}, fmt.Errorf("staged file holds %d bytes, below the parts' %d", fi.Size(), size)
	}
	if err := f.Truncate(size); err != nil {
		return storage.Info{}, err
	}
	return w.commit(ctx, sha)
}

// AbortStaged removes the staged write's file.
func (s *Store) AbortStaged(ctx context.Context, id string) error {
	file, _, err := parseStagedID(id)
	if err != nil {
		return nil
	}
	s.staged.forget(file)
	if err := s.root.Remove(file); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("localfs: abort staged: %w", err)
	}
	return nil
}
