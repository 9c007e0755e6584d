package localfs

import (
	"context"
	"fmt"
	"strings"

	"github.com/mcpblob/mcpblob/storage"
	"github.com/mcpblob/mcpblob/storage/internal/cursor"
)

// List returns up to limit objects whose keys start with prefix, in key
// order, after the cursor. A prefix that no valid key can start with gives an
// empty page.
func (s *Store) List(ctx context.Context, prefix, cur string, limit int) (storage.Page, error) {
	page, err := s.list(ctx, prefix, cur, limit)
	if err != nil {
		return storage.Page{}, fmt.Errorf("localfs: list %q: %w", prefix, err)
	}
	return page, nil
}

func (s *Store) list(ctx context.Context, prefix, cur string, limit int) (storage.Page, error) {
	after, err := cursor.Decode(cur)
	if err != nil {
		return storage.Page{}, err
	}
	if err := ctx.Err(); err != nil {
		return storage.Page{}, err
	}
	if limit <= 0 {
		limit = s.pageSize
	}
	// Start at the deepest directory the prefix names.
	if !cursor.ValidPrefix(prefix) {
		return storage.Page{}, nil
	}
	dir := prefix[:strings.LastIndexByte(prefix, '/')+1]
	l := &lister{s: s, ctx: ctx, prefix: prefix, after: after, limit: limit + 1}
	if err := l.walk(dir); err != nil {
		return storage.Page{}, err
	}
	var page storage.Page
	if len(l.items) > limit {
		l.items = l.items[:limit]
		page.NextCursor = cursor.Encode(l.items[limit-1].Key)
	}
	page.Items = l.items
	return page, nil
}

// lister collects one page of a List walk.
type lister struct {
	s      *Store
	ctx    context.Context
	prefix string // keys must start with it
	after  string // keys must sort after it
	limit  int    // stop once this many items are collected
	items  []storage.Info
}

func (l *lister) full() bool { return len(l.items) >= l.limit }

// walk visits the directory whose keys start with dir ("" or "a/b/") in key
// order, from the first entry that can hold a key after the cursor.
func (l *lister) walk(dir string) error {
	from, ok := l.start(dir)
	for ok && !l.full() {
		if err := l.ctx.Err(); err != nil {
			return err
		}
		// A few more than needed: some entries may not be objects.
		batch, err := l.s.index.page(dir, from, l.limit-len(l.items)+8, l.s.readEntries)
		if err != nil {
			if isNotExist(err) {
				return nil // no such prefix, or pruned meanwhile
			}
			return err
		}
		for _, e := range batch {
			if l.full() || !strings.HasPrefix(dir+e.sortName(), l.prefix) {
				// Sorted: every later entry is past the prefix too (or the page is full).
				return nil
			}
			if err := l.visit(dir, e); err != nil {
				return err
			}
		}
		if len(batch) == 0 {
			return nil
		}
		from = batch[len(batch)-1].sortName() + "\x00" // just after it
	}
	return nil
}

// start returns the sort name of dir's first entry that can hold a key
// starting with the prefix and after the cursor; ok is false when none can.
func (l *lister) start(dir string) (from string, ok bool) {
	if len(l.prefix) > len(dir) {
		from = l.prefix[len(dir):] // the walk starts in the prefix's deepest directory
	}
	if !strings.HasPrefix(l.after, dir) {
		return from, l.after < dir
	}
	// The cursor is in dir: start at the entry that holds it.
	rel := l.after[len(dir):]
	if i := strings.IndexByte(rel, '/'); i >= 0 {
		rel = rel[:i+1]
	}
	return max(from, rel), true
}

// visit adds the object e (of dir) to the page, or walks the folder e.
func (l *lister) visit(dir string, e entry) error {
	key := dir + e.name
	if e.dir {
		sub := key + "/"
		if !strings.HasPrefix(sub, l.prefix) && !strings.HasPrefix(l.prefix, sub) {
			return nil
		}
		// Every key below sub is above sub; skip the subtree when all of it
		// sorts before the cursor.
		if l.after > sub && !strings.HasPrefix(l.after, sub) {
			return nil
		}
		return l.walk(sub)
	}
	if !strings.HasPrefix(key, l.prefix) || key <= l.after || storage.ValidateKey(key) != nil {
		return nil
	}
	info, err := l.s.lookup(key)
	if err != nil {
		if isNotFound(err) {
			return nil // foreign file, or deleted meanwhile
		}
		return err
	}
	l.items = append(l.items, info)
	return nil
}
