package localfs

import (
	"cmp"
	"context"
	"fmt"
	"io/fs"
	"slices"
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
// order.
func (l *lister) walk(dir string) error {
	if err := l.ctx.Err(); err != nil {
		return err
	}
	name := "."
	if dir != "" {
		name = dir[:len(dir)-1]
	}
	entries, err := l.s.readDir(name)
	if err != nil {
		if isNotExist(err) {
			return nil // no such prefix, or pruned meanwhile
		}
		return err
	}
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return cmp.Compare(sortName(a), sortName(b)) })
	for _, e := range entries {
		if l.full() {
			return nil
		}
		key := dir + e.Name()
		switch {
		case dir == "" && e.Name() == storage.ReservedDir:
		case e.IsDir():
			sub := key + "/"
			if !strings.HasPrefix(sub, l.prefix) && !strings.HasPrefix(l.prefix, sub) {
				continue
			}
			// Every key below sub is above sub; skip the subtree when all of
			// it sorts before the cursor.
			if l.after > sub && !strings.HasPrefix(l.after, sub) {
				continue
			}
			if err := l.walk(sub); err != nil {
				return err
			}
		case e.Type().IsRegular():
			if !strings.HasPrefix(key, l.prefix) || key <= l.after || storage.ValidateKey(key) != nil {
				continue
			}
			info, err := l.s.lookup(key)
			if err != nil {
				if isNotFound(err) {
					continue // foreign file, or deleted meanwhile
				}
				return err
			}
			l.items = append(l.items, info)
		}
	}
	return nil
}

// sortName orders directory entries by the keys they hold: a directory "a"
// holds keys "a/...", so it sorts as "a/" (after "a.txt", before "a0").
func sortName(e fs.DirEntry) string {
	if e.IsDir() {
		return e.Name() + "/"
	}
	return e.Name()
}
