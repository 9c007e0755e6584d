package localfs

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
)

// listAll pages through prefix with pages of limit and returns the keys.
func listAll(t *testing.T, s *Store, prefix string, limit int) []string {
	t.Helper()
	var keys []string
	cur := ""
	for {
		page, err := s.List(t.Context(), prefix, cur, limit)
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range page.Items {
			keys = append(keys, it.Key)
		}
		if page.NextCursor == "" {
			return keys
		}
		cur = page.NextCursor
	}
}

func withPrefix(keys []string, prefix string) []string {
	var out []string
	for _, k := range keys {
		if strings.HasPrefix(k, prefix) {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// indexSizes are the list index budgets the listing tests run with: the
// default, one small enough to evict directories and to leave the larger
// ones unindexed, and none.
var indexSizes = []int{0, 4, -1}

// TestListOrder checks order, cursors and prefixes against a sorted model,
// with keys that sort differently from their directory order ("a.txt",
// "a/b", "a0").
func TestListOrder(t *testing.T) {
	keys := []string{"a", "a.txt", "a0", "b/a", "b/a.txt", "b/a/x", "b/a/y/z", "b/a0",
		"b/b", "c/d/e/f", "c/d/e0", "c/d0", "z", "b/a/y0", "b-", "b0/x"}
	keys = slices.DeleteFunc(keys, func(k string) bool { return k == "a" || k == "b/a" }) // folders
	prefixes := []string{"", "a", "b", "b/", "b/a", "b/a/", "b/a/y", "c/d/e", "c/d/e/", "nothing", "z"}
	for _, size := range indexSizes {
		t.Run(fmt.Sprintf("index=%d", size), func(t *testing.T) {
			s, err := Open(t.TempDir(), Options{ListIndexSize: size})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			for _, k := range keys {
				if err := put(t, s, k, k); err != nil {
					t.Fatal(err)
				}
			}
			for _, prefix := range prefixes {
				want := withPrefix(keys, prefix)
				for _, limit := range []int{1, 2, 3, 100} {
					if got := listAll(t, s, prefix, limit); !slices.Equal(got, want) {
						t.Errorf("prefix %q, pages of %d: %q, want %q", prefix, limit, got, want)
					}
				}
			}
		})
	}
}

// TestListChangesBetweenPages deletes, adds and overwrites keys between
// pages: the rest of the walk shows the store as it is then.
func TestListChangesBetweenPages(t *testing.T) {
	for _, size := range indexSizes {
		t.Run(fmt.Sprintf("index=%d", size), func(t *testing.T) {
			s, err := Open(t.TempDir(), Options{ListIndexSize: size})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			for _, k := range []string{"d/k1", "d/k2", "d/k3", "d/k5", "d/sub/x", "d/k7"} {
				if err := put(t, s, k, "v1"); err != nil {
					t.Fatal(err)
				}
			}
			page, err := s.List(t.Context(), "d/", "", 2) // d/k1, d/k2
			if err != nil || len(page.Items) != 2 || page.Items[1].Key != "d/k2" {
				t.Fatalf("first page = %+v, %v", page, err)
			}
			for _, k := range []string{"d/k0", "d/k4", "d/sub/w", "d/z/y"} {
				if err := put(t, s, k, "new"); err != nil {
					t.Fatal(err)
				}
			}
			if err := put(t, s, "d/k5", "version 2"); err != nil {
				t.Fatal(err)
			}
			for _, k := range []string{"d/k3", "d/sub/x", "d/k1"} {
				if err := s.Delete(t.Context(), k); err != nil {
					t.Fatal(err)
				}
			}
			var got []string
			for cur := page.NextCursor; cur != ""; cur = page.NextCursor {
				if page, err = s.List(t.Context(), "d/", cur, 2); err != nil {
					t.Fatal(err)
				}
				for _, it := range page.Items {
					got = append(got, it.Key)
					if it.Key == "d/k5" && it.Size != int64(len("version 2")) {
						t.Errorf("d/k5 listed with size %d, want the overwrite's", it.Size)
					}
				}
			}
			if want := []string{"d/k4", "d/k5", "d/k7", "d/sub/w", "d/z/y"}; !slices.Equal(got, want) {
				t.Errorf("after the changes: %q, want %q", got, want)
			}
		})
	}
}

// TestListPrunedFolders deletes the last key of nested folders and creates
// a key where a pruned folder was: the index follows both.
func TestListPrunedFolders(t *testing.T) {
	s, err := Open(t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, k := range []string{"a/b/c", "a/x", "q"} {
		if err := put(t, s, k, "v"); err != nil {
			t.Fatal(err)
		}
	}
	listAll(t, s, "", 1) // index every folder
	if err := s.Delete(t.Context(), "a/b/c"); err != nil {
		t.Fatal(err)
	}
	if got := listAll(t, s, "", 10); !slices.Equal(got, []string{"a/x", "q"}) {
		t.Errorf("after deleting a/b/c: %q", got)
	}
	if ix := s.index; ix.dirs["a/b/"] != nil || slices.Contains(ix.dirs["a/"].entries, entry{name: "b", dir: true}) {
		t.Errorf("pruned folder a/b still indexed: %+v", ix.dirs)
	}
	if err := put(t, s, "a/b", "now a file"); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(t.Context(), "q"); err != nil {
		t.Fatal(err)
	}
	if got := listAll(t, s, "", 10); !slices.Equal(got, []string{"a/b", "a/x"}) {
		t.Errorf("after a/b became a file: %q", got)
	}
}

// TestListConcurrentCommits pages through a folder while other goroutines
// commit and delete keys in it: every key present throughout is listed
// exactly once, in order, and the index then agrees with a fresh Open.
func TestListConcurrentCommits(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var stable []string
	for i := range 60 {
		k := fmt.Sprintf("f/s%03d", i)
		stable = append(stable, k)
		if err := put(t, s, k, "v"); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for w := range 3 {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(w), 1))
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				k := fmt.Sprintf("f/s%03d%c/%d", r.IntN(60), 'a'+w, i%5)
				if r.IntN(3) == 0 {
					k = fmt.Sprintf("f/s%03d.%d.%d", r.IntN(60), w, i%7)
				}
				if put(t, s, k, "c") == nil && i%2 == 1 {
					s.Delete(t.Context(), k)
				}
			}
		})
	}
	for range 5 {
		got := listAll(t, s, "f/", 7)
		if !slices.IsSorted(got) || len(slices.Compact(slices.Clone(got))) != len(got) {
			t.Errorf("walk not strictly increasing: %q", got)
		}
		if missing := slices.DeleteFunc(slices.Clone(stable), func(k string) bool {
			_, found := slices.BinarySearch(got, k)
			return found
		}); len(missing) > 0 {
			t.Errorf("walk missed %q", missing)
		}
	}
	close(stop)
	wg.Wait()
	indexed := listAll(t, s, "", 1000)
	s.Close()
	s, err = Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if fresh := listAll(t, s, "", 1000); !slices.Equal(indexed, fresh) {
		t.Errorf("index listed %d keys, a fresh Open %d:\n%q\n%q", len(indexed), len(fresh), indexed, fresh)
	}
}

// TestListIndexMemory measures the heap the list index keeps for a folder of
// 100,000 keys named like the benchmark's ("k0000000").
func TestListIndexMemory(t *testing.T) {
	const n = 100_000
	read := func(string) ([]entry, error) {
		entries := make([]entry, n)
		for i := range entries {
			entries[i] = entry{name: fmt.Sprintf("k%07d", i)}
		}
		return entries, nil
	}
	before := heapInUse()
	ix := newIndex(defaultListIndexSize)
	if _, err := ix.page("f/", "", 1, read); err != nil {
		t.Fatal(err)
	}
	perKey := float64(heapInUse()-before) / n
	runtime.KeepAlive(ix)
	t.Logf("list index: %.1f bytes a key at %d keys", perKey, n)
	if perKey > 48 {
		t.Errorf("list index holds %.1f bytes a key, want at most 48", perKey)
	}
	// The budget bounds it: a second folder evicts the first.
	ix.budget = n
	if _, err := ix.page("g/", "", 1, read); err != nil {
		t.Fatal(err)
	}
	if ix.entries != n || ix.dirs["f/"] != nil {
		t.Errorf("over budget: %d entries, dirs %d", ix.entries, len(ix.dirs))
	}
}

func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
