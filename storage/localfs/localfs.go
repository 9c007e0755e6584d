package localfs

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path"
	"strings"
	"sync"
	"syscall"

	"github.com/mcpblob/mcpblob/storage"
)

// Options configure a Store. The zero value is the documented default.
type Options struct {
	// Logger receives start-up housekeeping messages (leftovers of
	// interrupted uploads removed); nil discards them.
	Logger *slog.Logger
	// PageSize is the List page size used when the caller passes a limit
	// <= 0. Default 1000.
	PageSize int
	// ListIndexSize bounds the folder entries (names) that List keeps in
	// memory, sorted, between pages; see the package documentation. Default
	// 1,000,000 (about 32 bytes each plus the name: 52 MB at names of 20
	// bytes); negative keeps none.
	ListIndexSize int
	// MetaCacheSize bounds the objects whose metadata (the parsed sidecar)
	// a Store keeps in memory so that reads skip reading it; at most 250
	// bytes each plus the key (212 measured): 18 MB at the default, 65,536,
	// with keys of 20 bytes. Negative keeps none.
	MetaCacheSize int
}

// ErrLocked is returned by Open when another Store holds the folder.
var ErrLocked = errors.New("localfs: folder is in use by another store")

const (
	metaDir         = storage.ReservedDir + "/meta"
	tmpDir          = storage.ReservedDir + "/tmp"
	lockName        = storage.ReservedDir + "/lock"
	journalSuffix   = ".key"
	defaultPageSize = 1000
	// defaultListIndexSize is Options.ListIndexSize's default.
	defaultListIndexSize = 1_000_000
	dirMode              = 0o700
	fileMode             = 0o600
	// readAttempts bounds how often a reader starts over when commits keep
	// replacing the object under it.
	readAttempts = 100
	// placeAttempts bounds how often a rename recreates parent directories
	// that a concurrent Delete pruned.
	placeAttempts = 5
)

// Store is a local folder holding objects. It implements storage.Backend and
// is safe for concurrent use.
type Store struct {
	dir      string
	root     *os.Root
	lock     *os.File
	log      *slog.Logger
	pageSize int
	index    *index
	// beneath opens data files in one openat2 call; nil where it is not
	// available (then root does).
	beneath *beneath
	meta    *metaCache
	// claimDirs holds the claim sets' folders open (see Claimed).
	claimDirs claimDirs
	// keyMu serialises commits and deletes of keys hashing to the same slot.
	keyMu [slots]sync.Mutex
	// staged serialises the writes of each staged file (see PutStaged).
	staged stagedWriters
}

var _ storage.Backend = (*Store)(nil)

// Open opens (creating it if needed) the store in dir, takes its lock, and
// cleans up after interrupted uploads and commits.
func Open(dir string, opts Options) (*Store, error) {
	s, err := open(dir, opts)
	if err != nil {
		return nil, fmt.Errorf("localfs: open %q: %w", dir, err)
	}
	return s, nil
}

func open(dir string, opts Options) (*Store, error) {
	if err := os.MkdirAll(dir, dirMode); err != nil {
		return nil, err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	s := &Store{dir: dir, root: root, log: opts.Logger, pageSize: opts.PageSize}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.pageSize <= 0 {
		s.pageSize = defaultPageSize
	}
	indexSize := opts.ListIndexSize
	if indexSize == 0 {
		indexSize = defaultListIndexSize
	}
	s.index = newIndex(max(indexSize, 0))
	metaSize := opts.MetaCacheSize
	if metaSize == 0 {
		metaSize = defaultMetaCacheSize
	}
	s.meta = newMetaCache(metaSize)
	s.beneath = openBeneath(root)
	if err := s.init(); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

func (s *Store) init() error {
	for _, d := range []string{metaDir, tmpDir} {
		if err := s.root.MkdirAll(d, dirMode); err != nil {
			return err
		}
	}
	lock, err := s.root.OpenFile(lockName, os.O_RDWR|os.O_CREATE, fileMode)
	if err != nil {
		return err
	}
	if err := lockFile(lock); err != nil {
		lock.Close()
		return err
	}
	s.lock = lock
	return s.recover()
}

// recover replays the journals of interrupted commits and deletes, then
// removes every temporary file. It runs before the Store is shared.
func (s *Store) recover() error {
	entries, err := s.readDir(tmpDir)
	if err != nil {
		return err
	}
	journals := 0
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), journalSuffix) {
			continue
		}
		b, err := s.root.ReadFile(tmpDir + "/" + e.Name())
		if err != nil {
			return err
		}
		if key := string(b); storage.ValidateKey(key) == nil {
			if err := s.reconcile(key); err != nil {
				return fmt.Errorf("replay journal of %q: %w", key, err)
			}
			journals++
		}
	}
	for _, e := range entries {
		if err := s.root.RemoveAll(tmpDir + "/" + e.Name()); err != nil {
			return err
		}
	}
	if len(entries) > 0 {
		s.log.Info("localfs: cleaned up interrupted uploads", "dir", s.dir,
			"removed", len(entries), "journals", journals)
	}
	return nil
}

// reconcile makes key's sidecar describe exactly its data file: it drops
// records that match no data file and removes a sidecar left without data.
// The caller holds key's lock (or runs before the Store is shared).
func (s *Store) reconcile(key string) error {
	m, err := s.readSidecar(key)
	if err != nil || m == nil {
		return err
	}
	var keep *record
	fi, err := s.root.Lstat(key)
	switch {
	case err == nil:
		keep = m.match(fi)
	case !isNotExist(err):
		return err
	}
	if keep == nil {
		err := s.root.Remove(metaPath(key))
		s.meta.changed(key)
		if err != nil && !isNotExist(err) {
			return err
		}
		s.prune(metaDir+"/", key)
		return s.syncDir(path.Dir(metaPath(key)))
	}
	if len(m.Versions) == 1 {
		return nil
	}
	return s.writeSidecar(key, &sidecar{Versions: []record{*keep}})
}

// Close releases the folder. Writers still open fail afterwards.
func (s *Store) Close() error {
	var errs []error
	s.claimDirs.close()
	if s.beneath != nil {
		errs = append(errs, s.beneath.close())
	}
	if s.lock != nil {
		errs = append(errs, s.lock.Close())
	}
	errs = append(errs, s.root.Close())
	return errors.Join(errs...)
}

// Stat returns the Info of key.
func (s *Store) Stat(ctx context.Context, key string) (storage.Info, error) {
	if err := checkKey(ctx, key); err != nil {
		return storage.Info{}, fmt.Errorf("localfs: stat %q: %w", key, err)
	}
	info, err := s.lookup(key)
	if err != nil {
		return storage.Info{}, fmt.Errorf("localfs: stat %q: %w", key, err)
	}
	return info, nil
}

// lookup returns the Info of the visible version of key, or ErrNotFound.
func (s *Store) lookup(key string) (storage.Info, error) {
	for range readAttempts {
		v, err := s.statData(key)
		if err != nil {
			return storage.Info{}, err
		}
		r, err := s.recordFor(key, v)
		if err != nil {
			return storage.Info{}, err
		}
		if r != nil {
			return r.info(key), nil
		}
		if stable, err := s.unchanged(key, v); stable || err != nil {
			return storage.Info{}, err
		}
	}
	return storage.Info{}, errUnsettled
}

// Open returns the object's bytes and Info: an *os.File when rng is nil,
// else a *storage.LimitedFile positioned at the range start.
func (s *Store) Open(ctx context.Context, key string, rng *storage.Range) (io.ReadCloser, storage.Info, error) {
	if err := checkKey(ctx, key); err != nil {
		return nil, storage.Info{}, fmt.Errorf("localfs: open %q: %w", key, err)
	}
	f, info, err := s.open(key)
	if err != nil {
		return nil, storage.Info{}, fmt.Errorf("localfs: open %q: %w", key, err)
	}
	if rng == nil {
		return f, info, nil
	}
	off, n, err := rng.Clip(info.Size)
	if err == nil {
		_, err = f.Seek(off, io.SeekStart)
	}
	if err != nil {
		f.Close()
		return nil, storage.Info{}, fmt.Errorf("localfs: open %q: %w", key, err)
	}
	return storage.NewLimitedFile(f, n), info, nil
}

// open opens the visible version of key. The open file pins that version:
// later commits replace the name, not the file.
func (s *Store) open(key string) (*os.File, storage.Info, error) {
	for range readAttempts {
		f, v, err := s.openData(key)
		if err != nil {
			return nil, storage.Info{}, err
		}
		r, err := s.recordFor(key, v)
		if r != nil && err == nil {
			return f, r.info(key), nil
		}
		f.Close()
		if err != nil {
			return nil, storage.Info{}, err
		}
		if stable, err := s.unchanged(key, v); stable || err != nil {
			return nil, storage.Info{}, err
		}
	}
	return nil, storage.Info{}, errUnsettled
}

// unchanged is called when the data file version v of key matched no
// sidecar record. It reports stable = true with ErrNotFound when key still
// names that version (so the file has no metadata and is not an object), and
// stable = false when a commit replaced it meanwhile (the caller starts
// over). Versions are told apart by size and modification time, which each
// commit makes distinct.
func (s *Store) unchanged(key string, v version) (stable bool, err error) {
	again, err := s.statData(key)
	if err != nil {
		return true, err
	}
	if again == v {
		return true, storage.ErrNotFound
	}
	return false, nil
}

// Delete removes key and prunes directories left empty.
func (s *Store) Delete(ctx context.Context, key string) error {
	if err := checkKey(ctx, key); err != nil {
		return fmt.Errorf("localfs: delete %q: %w", key, err)
	}
	if err := s.delete(key); err != nil {
		return fmt.Errorf("localfs: delete %q: %w", key, err)
	}
	return nil
}

func (s *Store) delete(key string) error {
	mu := s.keyLock(key)
	mu.Lock()
	defer mu.Unlock()
	if _, err := s.lookup(key); err != nil {
		return err
	}
	journal, err := s.writeJournal(key)
	if err != nil {
		return err
	}
	if err := s.root.Remove(key); err != nil {
		s.root.Remove(journal)
		return err
	}
	crashPoint("delete: data removed")
	defer s.index.removed(key, s.gone)
	metaErr := ignoreNotExist(s.root.Remove(metaPath(key)))
	s.meta.changed(key)
	err = errors.Join(
		s.syncDir(path.Dir(key)),
		metaErr,
		s.syncDir(path.Dir(metaPath(key))),
	)
	if err != nil {
		// The object is gone; the journal lets the next Open finish the job.
		s.log.Warn("localfs: delete left metadata behind", "key", key, "err", err)
		return nil
	}
	s.prune("", key)
	s.prune(metaDir+"/", key)
	s.root.Remove(journal)
	return nil
}

// prune removes the directories above key (under base) that are empty,
// deepest first. It is best effort: it stops at the first one still in use.
func (s *Store) prune(base, key string) {
	for dir := path.Dir(key); dir != "."; dir = path.Dir(dir) {
		if s.root.Remove(base+dir) != nil {
			return
		}
	}
}

// gone reports whether the folder dir no longer exists.
func (s *Store) gone(dir string) bool {
	_, err := s.root.Lstat(dir)
	return isNotExist(err)
}

// keyLock returns the mutex that serialises commits and deletes of key.
func (s *Store) keyLock(key string) *sync.Mutex {
	return &s.keyMu[slotOf(key)]
}

// writeJournal records in tmpDir that key is about to change, so that a
// crash in the middle is repaired by the next Open. It returns the journal's
// name for removal once the change is complete.
func (s *Store) writeJournal(key string) (string, error) {
	name := tmpDir + "/" + rand.Text() + journalSuffix
	if err := s.writeFile(name, []byte(key)); err != nil {
		s.root.Remove(name)
		return "", err
	}
	return name, nil
}

// writeSidecar atomically replaces key's sidecar with m.
func (s *Store) writeSidecar(key string, m *sidecar) error {
	b, err := marshalSidecar(m)
	if err != nil {
		return err
	}
	tmp := tmpDir + "/" + rand.Text() + ".meta"
	if err := s.writeFile(tmp, b); err != nil {
		s.root.Remove(tmp)
		return err
	}
	err = s.place(tmp, metaPath(key))
	s.meta.changed(key)
	if err != nil {
		s.root.Remove(tmp)
		return err
	}
	return s.syncDir(path.Dir(metaPath(key)))
}

// writeFile creates name with the bytes of bs, in order, and fsyncs it.
func (s *Store) writeFile(name string, bs ...[]byte) error {
	f, err := s.root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, fileMode)
	if err != nil {
		return err
	}
	for _, b := range bs {
		if _, err = f.Write(b); err != nil {
			break
		}
	}
	if err == nil {
		err = f.Sync()
	}
	return errors.Join(err, f.Close())
}

// place renames from over to, creating to's parent directories when they
// are missing (again, if a concurrent Delete prunes them meanwhile).
func (s *Store) place(from, to string) error {
	for attempt := 1; ; attempt++ {
		err := s.root.Rename(from, to)
		if err == nil || attempt == placeAttempts || !errors.Is(err, fs.ErrNotExist) {
			return conflict(err)
		}
		if err := s.mkdirs(path.Dir(to)); err != nil {
			return conflict(err)
		}
	}
}

// mkdirs creates dir and its missing parents, fsyncing the parent of each
// directory it creates.
func (s *Store) mkdirs(dir string) error {
	for i := 1; i <= len(dir); i++ {
		if i < len(dir) && dir[i] != '/' {
			continue
		}
		p := dir[:i]
		err := s.root.Mkdir(p, dirMode)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return err
		}
		if err := s.syncDir(path.Dir(p)); err != nil {
			return err
		}
	}
	return nil
}

// syncDir fsyncs a directory so that renames and removals in it survive a
// power failure.
func (s *Store) syncDir(dir string) error {
	f, err := s.root.Open(dir)
	if err != nil {
		return err
	}
	err = f.Sync()
	if errors.Is(err, syscall.EINVAL) {
		err = nil // some file systems cannot fsync directories
	}
	return errors.Join(err, f.Close())
}

func (s *Store) readDir(dir string) ([]os.DirEntry, error) {
	f, err := s.root.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.ReadDir(-1)
}

func metaPath(key string) string { return metaDir + "/" + key }

// checkKey validates key and ctx before any file system access (the key
// rules bound each segment to storage.MaxSegmentLen, the file systems'
// name limit).
func checkKey(ctx context.Context, key string) error {
	if err := storage.ValidateKey(key); err != nil {
		return err
	}
	return ctx.Err()
}

// errNameTooLong is the key error for a name the file system refused as too
// long (a file system with a limit below storage.MaxSegmentLen).
func errNameTooLong(err error) error {
	return &storage.KeyError{Reason: "is too long for the local store's file system", Err: err}
}

// crashHook, when set (by tests only), is called at the named points of the
// commit and delete protocols; the crash tests kill the process there.
var crashHook func(point string)

func crashPoint(point string) {
	if crashHook != nil {
		crashHook(point)
	}
}

// errUnsettled reports a reader that lost readAttempts races in a row with
// commits to the same key.
var errUnsettled = errors.New("object keeps changing, try again")

func isNotExist(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
}

func ignoreNotExist(err error) error {
	if isNotExist(err) {
		return nil
	}
	return err
}

// notFound maps "no such file" (including a file where a directory was
// expected) to storage.ErrNotFound and a name the file system cannot hold to
// storage.ErrInvalidKey. A nil error (a name that exists but is not a regular
// file) is also ErrNotFound.
func notFound(err error) error {
	switch {
	case err == nil, isNotExist(err), errors.Is(err, syscall.EISDIR):
		return storage.ErrNotFound
	case errors.Is(err, syscall.ENAMETOOLONG):
		return errNameTooLong(err)
	}
	return err
}

// conflict maps the errors of a path that is a file where a directory is
// needed, or the reverse, to storage.ErrPathConflict. An error it mapped
// already (place's, given to keyConflict) is returned as it is.
func conflict(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, storage.ErrPathConflict), errors.Is(err, storage.ErrInvalidKey):
		return err
	case errors.Is(err, syscall.ENOTDIR), errors.Is(err, syscall.EISDIR),
		errors.Is(err, syscall.EEXIST), errors.Is(err, syscall.ENOTEMPTY):
		return fmt.Errorf("%w: a file and a folder would share a path: %w", storage.ErrPathConflict, err)
	case errors.Is(err, syscall.ENAMETOOLONG):
		return errNameTooLong(err)
	}
	return err
}

// keyConflict maps err as conflict does and, for a path conflict of key,
// names what is in the way (a *storage.PathConflictError): a parent that is
// a file, else key's own folder. The mapped error is kept when neither is
// found (the tree changed meanwhile).
func (s *Store) keyConflict(key string, err error) error {
	err = conflict(err)
	if !errors.Is(err, storage.ErrPathConflict) {
		return err
	}
	for _, p := range storage.Parents(key) {
		if fi, lerr := s.root.Lstat(p); lerr == nil && !fi.IsDir() {
			return &storage.PathConflictError{Key: key, Conflict: p}
		}
	}
	if fi, lerr := s.root.Lstat(key); lerr == nil && fi.IsDir() {
		return &storage.PathConflictError{Key: key, Conflict: key + "/"}
	}
	return err
}

func isNotFound(err error) bool { return errors.Is(err, storage.ErrNotFound) }
