package storagetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/mcpblob/mcpblob/storage"
)

// recorder returns b's Recorder, and skips the test when b has none (a view
// of a store, storage/namespace, leaves records on the store it views).
func recorder(t *testing.T, b storage.Backend) storage.Recorder {
	t.Helper()
	r, ok := b.(storage.Recorder)
	if !ok {
		t.Skipf("%T does not implement storage.Recorder", b)
	}
	return r
}

// testRecords: a record is created only when absent, replaced only under
// its current version, read back with that version, invisible to List,
// deleted; bad names are refused.
func (s Suite) testRecords(t *testing.T, b storage.Backend) {
	ctx := context.Background()
	r := recorder(t, b)
	const name = "test/rec-1"
	if _, _, err := r.GetRecord(ctx, name); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("GetRecord of a missing record: %v; want ErrNotFound", err)
	}
	_, err := r.PutRecord(ctx, name, []byte("one"), "not-a-version")
	wantErr(t, "PutRecord of a missing record under If-Match", err, storage.ErrPreconditionFailed)
	v1, err := r.PutRecord(ctx, name, []byte("one"), "")
	if err != nil {
		t.Fatalf("PutRecord (create): %v", err)
	}
	_, err = r.PutRecord(ctx, name, []byte("again"), "")
	wantErr(t, "second create", err, storage.ErrPreconditionFailed)
	wantRecord(t, r, name, "one", v1)
	v2, err := r.PutRecord(ctx, name, []byte("two"), v1)
	if err != nil || v2 == v1 {
		t.Fatalf("PutRecord under the current version = %q, %v; want a new version", v2, err)
	}
	_, err = r.PutRecord(ctx, name, []byte("three"), v1)
	wantErr(t, "PutRecord under a stale version", err, storage.ErrPreconditionFailed)
	wantRecord(t, r, name, "two", v2)
	if keys := listKeys(t, b, "", 0); len(keys) != 0 {
		t.Fatalf("List shows records: %q", keys)
	}
	wantListed(t, r, "test", name)
	for _, n := range []string{"test/deep/a", "test/deep/b", "testx/c"} {
		if _, err := r.PutRecord(ctx, n, nil, ""); err != nil {
			t.Fatalf("PutRecord(%s): %v", n, err)
		}
	}
	wantListed(t, r, "test", name, "test/deep/a", "test/deep/b")
	wantListed(t, r, "test/deep", "test/deep/a", "test/deep/b")
	wantListed(t, r, "none")
	if err := r.DeleteRecord(ctx, name); err != nil {
		t.Fatalf("DeleteRecord: %v", err)
	}
	if err := r.DeleteRecord(ctx, name); err != nil {
		t.Fatalf("DeleteRecord of a deleted record: %v", err)
	}
	if _, _, err := r.GetRecord(ctx, name); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("GetRecord after DeleteRecord: %v; want ErrNotFound", err)
	}
	for _, bad := range []string{"", "../x", "a//b", "a/", "a b"} {
		_, err := r.PutRecord(ctx, bad, nil, "")
		wantErr(t, fmt.Sprintf("PutRecord(%q)", bad), err, storage.ErrInvalidKey)
	}
}

// wantListed checks that ListRecords(dir) gives exactly want.
func wantListed(t *testing.T, r storage.Recorder, dir string, want ...string) {
	t.Helper()
	var got []string
	if err := r.ListRecords(context.Background(), dir, func(n string) bool { got = append(got, n); return true }); err != nil {
		t.Fatalf("ListRecords(%s): %v", dir, err)
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("ListRecords(%s) = %q, want %q", dir, got, want)
	}
}

func wantRecord(t *testing.T, r storage.Recorder, name, data, version string) {
	t.Helper()
	got, v, err := r.GetRecord(context.Background(), name)
	if err != nil || !bytes.Equal(got, []byte(data)) || v != version {
		t.Fatalf("GetRecord(%s) = %q, %q, %v; want %q, %q", name, got, v, err, data, version)
	}
}

// testConcurrentRecords: racers read one record's version and replace it
// under that version at once; exactly one wins each round, the others get
// ErrPreconditionFailed, and the record holds the winner's bytes. Readers
// meanwhile always read a whole record (never an error: S3 readers that
// read an object in two requests fail when it is replaced in between).
func (s Suite) testConcurrentRecords(t *testing.T, b storage.Backend) {
	ctx := context.Background()
	r := recorder(t, b)
	const name, rounds, racers = "race/rec", 6, 8
	v, err := r.PutRecord(ctx, name, []byte("start"), "")
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var readers sync.WaitGroup
	for range 2 {
		readers.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				if data, _, err := r.GetRecord(ctx, name); err != nil || len(data) == 0 {
					t.Errorf("GetRecord while the record is replaced: %q, %v", data, err)
					return
				}
			}
		})
	}
	defer readers.Wait()
	defer close(stop)
	for round := range rounds {
		var wg sync.WaitGroup
		var mu sync.Mutex
		winners, next, data := 0, "", ""
		for i := range racers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				mine := fmt.Sprintf("round %d racer %d", round, i)
				nv, err := r.PutRecord(ctx, name, []byte(mine), v)
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					winners++
					next, data = nv, mine
				case !errors.Is(err, storage.ErrPreconditionFailed):
					t.Errorf("PutRecord: %v", err)
				}
			}()
		}
		wg.Wait()
		if winners != 1 {
			t.Fatalf("round %d: %d winners of %d racers; want exactly 1", round, winners, racers)
		}
		wantRecord(t, r, name, data, next)
		v = next
	}
}
