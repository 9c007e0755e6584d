package localfs

import (
	"cmp"
	"slices"
	"strings"
	"sync"

	"github.com/mcpblob/mcpblob/storage"
)

// entry is one name in a directory: an object's file or a folder of keys.
type entry struct {
	name string
	dir  bool
}

// sortName orders entries by the keys they hold: a directory "a" holds keys
// "a/...", so it sorts as "a/" (after "a.txt", before "a0").
func (e entry) sortName() string {
	if e.dir {
		return e.name + "/"
	}
	return e.name
}

func compareEntries(a, b entry) int { return cmp.Compare(a.sortName(), b.sortName()) }

// dirIndex is the sorted list of one directory's entries.
type dirIndex struct {
	entries []entry
	used    uint64 // index clock at the last read, for eviction
}

// search returns the position of the first entry whose sort name is at
// least from.
func (d *dirIndex) search(from string) int {
	i, _ := slices.BinarySearchFunc(d.entries, from, func(e entry, from string) int {
		return cmp.Compare(e.sortName(), from)
	})
	return i
}

func (d *dirIndex) insert(e entry) (added bool) {
	i, found := slices.BinarySearchFunc(d.entries, e, compareEntries)
	if found {
		return false
	}
	d.entries = slices.Insert(d.entries, i, e)
	return true
}

func (d *dirIndex) remove(e entry) (removed bool) {
	i, found := slices.BinarySearchFunc(d.entries, e, compareEntries)
	if !found {
		return false
	}
	d.entries = slices.Delete(d.entries, i, i+1)
	return true
}

// index holds, in memory, the sorted entries of the directories List has
// read, so that a page costs a binary search and not a read and sort of the
// whole directory. It is built lazily from the files after every Open (so a
// crash cannot leave it disagreeing with them) and kept up to date by this
// Store's commits and deletes, the only writer of the folder (see the lock).
// It holds at most budget entries: reading a directory evicts the least
// recently read ones beyond that, and a directory larger than the budget is
// never kept (each of its pages reads it again).
type index struct {
	// mu guards everything below. It is held while a directory is read into
	// the index, so that a commit or delete that changes the directory in
	// the meantime updates the index after the read and is not lost.
	mu      sync.Mutex
	dirs    map[string]*dirIndex // by directory: "" or "a/b/"
	entries int                  // total over dirs
	budget  int
	clock   uint64
}

func newIndex(budget int) *index {
	return &index{dirs: make(map[string]*dirIndex), budget: budget}
}

// readFunc reads a directory's entries (unsorted) from the disk.
type readFunc func(dir string) ([]entry, error)

// page returns up to n entries of dir whose sort names are at least from,
// in order, reading dir with read unless it is indexed.
func (ix *index) page(dir, from string, n int, read readFunc) ([]entry, error) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	d := ix.dirs[dir]
	if d == nil {
		entries, err := read(dir)
		if err != nil {
			return nil, err
		}
		slices.SortFunc(entries, compareEntries)
		d = &dirIndex{entries: entries}
		ix.keep(dir, d)
	}
	ix.clock++
	d.used = ix.clock
	i := d.search(from)
	return slices.Clone(d.entries[i:min(i+n, len(d.entries))]), nil
}

// keep adds d to the index when it fits the budget, evicting the least
// recently read directories to make room.
func (ix *index) keep(dir string, d *dirIndex) {
	if len(d.entries) > ix.budget {
		return
	}
	for ix.entries+len(d.entries) > ix.budget {
		ix.evictOldest()
	}
	ix.dirs[dir] = d
	ix.entries += len(d.entries)
}

func (ix *index) evictOldest() {
	var oldest string
	var at uint64
	for dir, d := range ix.dirs {
		if at == 0 || d.used < at {
			oldest, at = dir, d.used
		}
	}
	ix.entries -= len(ix.dirs[oldest].entries)
	delete(ix.dirs, oldest)
}

// added records that key's data file now exists: it and every folder above
// it are entered in the indexed directories that lack them. The caller
// calls it after the rename that made the file visible.
func (ix *index) added(key string) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	dir := ""
	for {
		seg, rest, isDir := strings.Cut(key[len(dir):], "/")
		if d := ix.dirs[dir]; d != nil && d.insert(entry{name: seg, dir: isDir}) {
			ix.entries++
		}
		if !isDir {
			break
		}
		dir = key[:len(key)-len(rest)]
	}
	// A commit may grow an indexed directory past the budget: evict others.
	for ix.entries > ix.budget && len(ix.dirs) > 1 {
		ix.evictOldest()
	}
}

// removed records that key's data file is gone, and that the folders above
// it for which gone reports true ("a/b" for keys "a/b/...") were pruned. The
// caller calls it after the removal.
func (ix *index) removed(key string, gone func(folder string) bool) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	name, isDir := key, false // the path whose entry goes: key, then each pruned folder
	for {
		dir, base := splitDir(name)
		if d := ix.dirs[dir]; d != nil && d.remove(entry{name: base, dir: isDir}) {
			ix.entries--
		}
		if dir == "" || !gone(dir[:len(dir)-1]) {
			return
		}
		if d := ix.dirs[dir]; d != nil {
			ix.entries -= len(d.entries)
			delete(ix.dirs, dir)
		}
		name, isDir = dir[:len(dir)-1], true
	}
}

// splitDir splits a path after its last slash: "a/b/c" gives "a/b/", "c".
func splitDir(p string) (dir, base string) {
	i := strings.LastIndexByte(p, '/') + 1
	return p[:i], p[i:]
}

// readEntries reads the entries of dir ("" or "a/b/") that can hold keys:
// regular files and folders, without the reserved folder.
func (s *Store) readEntries(dir string) ([]entry, error) {
	name := "."
	if dir != "" {
		name = dir[:len(dir)-1]
	}
	f, err := s.root.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	entries, err := readDirEntries(f)
	if err != nil {
		return nil, err
	}
	if dir == "" {
		entries = slices.DeleteFunc(entries, func(e entry) bool { return e.name == storage.ReservedDir })
	}
	return entries, nil
}
