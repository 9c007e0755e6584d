package localfs

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/mcpblob/mcpblob/storage"
)

// TestMetaCacheBound: the cache never holds more than its maximum.
func TestMetaCacheBound(t *testing.T) {
	c := newMetaCache(100)
	for i := range 1000 {
		key := fmt.Sprintf("k/%d", i)
		c.put(key, c.generation(key), &sidecar{Versions: []record{{Size: 1}}})
		if len(c.entries) > 100 {
			t.Fatalf("after %d puts the cache holds %d entries; max 100", i+1, len(c.entries))
		}
	}
}

// TestMetaCacheStaleRead: a sidecar read before a change is not cached.
func TestMetaCacheStaleRead(t *testing.T) {
	c := newMetaCache(10)
	gen := c.generation("k")
	c.changed("k")
	c.put("k", gen, &sidecar{Versions: []record{{Size: 1}}})
	if c.get("k") != nil {
		t.Fatal("a sidecar read before a change was cached")
	}
}

// TestMetaCacheMemory measures the heap an entry costs (a decoded sidecar
// of one record with a 64-byte digest, and a 20-byte key) against the
// figure documented on Options.MetaCacheSize: 250 bytes plus the key.
func TestMetaCacheMemory(t *testing.T) {
	const n = 20_000
	b, err := marshalSidecar(&sidecar{Versions: []record{{
		Size: 4096, MTime: 1_700_000_000_000_000_000,
		SHA256: strings.Repeat("a", 64), MediaType: "text/plain",
	}}})
	if err != nil {
		t.Fatal(err)
	}
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("resources/r%010d", i)
	}
	c := newMetaCache(n)
	before := heapInUse()
	for _, key := range keys {
		var m sidecar
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		c.put(key, c.generation(key), &m)
	}
	perEntry := float64(heapInUse()-before) / n
	runtime.KeepAlive(c)
	t.Logf("%.0f bytes per entry (key of %d bytes held by the caller)", perEntry, len(keys[0]))
	if perEntry > 250 {
		t.Errorf("an entry costs %.0f bytes; documented at most 250 plus the key", perEntry)
	}
}

// TestMetaCacheFollowsCommits: reads after each overwrite and after a
// delete see the disk, not a cached sidecar.
func TestMetaCacheFollowsCommits(t *testing.T) {
	s := newStore(t)
	defer s.Close()
	ctx := t.Context()
	for i := range 20 {
		want := strings.Repeat("v", i%3+1) + fmt.Sprint(i)
		if err := put(t, s, "k", want); err != nil {
			t.Fatal(err)
		}
		rc, info, err := s.Open(ctx, "k", nil)
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(rc)
		rc.Close()
		if err != nil || string(got) != want || info.Size != int64(len(want)) {
			t.Fatalf("version %d: read %q (size %d), %v; want %q", i, got, info.Size, err, want)
		}
	}
	if err := s.Delete(ctx, "k"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Stat(ctx, "k"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("Stat after Delete = %v; want ErrNotFound", err)
	}
}
