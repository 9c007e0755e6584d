package localfs

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/mcpblob/mcpblob/storage"
)

const slotRecord = "tus/u1/info"

// openSlots opens a store on a new folder and puts two versions of a
// record: the first creates its file, the second goes into its other slot.
func openSlots(t *testing.T) (dir string, s *Store, v2 string) {
	t.Helper()
	dir = t.TempDir()
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	v1, err := s.PutRecord(ctx, slotRecord, []byte("first state"), "")
	if err != nil {
		t.Fatal(err)
	}
	if v2, err = s.PutRecord(ctx, slotRecord, []byte("second state"), v1); err != nil {
		t.Fatal(err)
	}
	return dir, s, v2
}

func recordFilePath(dir string) string {
	return filepath.Join(dir, filepath.FromSlash(storage.RecordsDir+"/"+slotRecord))
}

func inode(t *testing.T, p string) uint64 {
	t.Helper()
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Sys().(*syscall.Stat_t).Ino
}

// TestRecordUpdateInPlace: an update that fits the record's file is
// written into it (same file, no rename), and the record reads back, with
// its compare-and-swap, after the store is opened again.
func TestRecordUpdateInPlace(t *testing.T) {
	ctx := context.Background()
	dir, s, v2 := openSlots(t)
	p := recordFilePath(dir)
	ino := inode(t, p)
	v3, err := s.PutRecord(ctx, slotRecord, []byte("third state"), v2)
	if err != nil {
		t.Fatal(err)
	}
	if got := inode(t, p); got != ino {
		t.Errorf("the update replaced the record's file (inode %d, was %d); want it written in place", got, ino)
	}
	if _, err := s.PutRecord(ctx, slotRecord, []byte("stale"), v2); err == nil {
		t.Fatal("a write naming the version before the current one succeeded")
	}
	s.Close()
	s, err = Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	data, v, err := s.GetRecord(ctx, slotRecord)
	if err != nil || string(data) != "third state" || v != v3 {
		t.Fatalf("after reopening: %q, %q, %v; want %q, %q", data, v, err, "third state", v3)
	}
}

// TestRecordTornWrite: an update torn by a crash (power lost while the
// slot was written: its header and part of its bytes, or part of its
// header) leaves the record as it was before the update, readable and
// writable by compare-and-swap; the torn slot is the next write's.
func TestRecordTornWrite(t *testing.T) {
	ctx := context.Background()
	next := bytes.Repeat([]byte("the update that never finished "), 20)
	for _, tc := range []struct {
		name string
		torn func(head []byte) []byte // the bytes that reached the disk
	}{
		{"bytes cut", func(head []byte) []byte { return append(head, next[:len(next)/2]...) }},
		{"header cut", func(head []byte) []byte { return head[:20] }},
		{"bytes flipped", func(head []byte) []byte {
			b := append(head, next...)
			b[len(b)-1] ^= 1
			return b
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, s, v2 := openSlots(t)
			s.Close()
			// The second write went to slot 1; a third goes to slot 0.
			p := recordFilePath(dir)
			f, err := os.OpenFile(p, os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := f.WriteAt(tc.torn(slotHead(3, strings.Repeat("X", recordVersionLen), next)), 0); err != nil {
				t.Fatal(err)
			}
			f.Close()
			s, err = Open(dir, Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			data, v, err := s.GetRecord(ctx, slotRecord)
			if err != nil || string(data) != "second state" || v != v2 {
				t.Fatalf("after the torn write: %q, %q, %v; want %q, %q", data, v, err, "second state", v2)
			}
			v4, err := s.PutRecord(ctx, slotRecord, []byte("fourth state"), v2)
			if err != nil {
				t.Fatalf("compare-and-swap after the torn write: %v", err)
			}
			if data, v, err = s.GetRecord(ctx, slotRecord); err != nil || string(data) != "fourth state" || v != v4 {
				t.Fatalf("after writing again: %q, %q, %v; want %q, %q", data, v, err, "fourth state", v4)
			}
		})
	}
}

// TestRecordOutgrowsSlots: a record that no longer fits its file's slots
// gets a new file; a record file of the older format (version, newline,
// bytes) is read, and replaced by a slot file at its next write.
func TestRecordOutgrowsSlots(t *testing.T) {
	ctx := context.Background()
	dir, s, v2 := openSlots(t)
	defer s.Close()
	big := bytes.Repeat([]byte{7}, 3*slotAlign)
	v3, err := s.PutRecord(ctx, slotRecord, big, v2)
	if err != nil {
		t.Fatal(err)
	}
	if data, v, err := s.GetRecord(ctx, slotRecord); err != nil || !bytes.Equal(data, big) || v != v3 {
		t.Fatalf("grown record: %d bytes, %q, %v; want %d bytes, %q", len(data), v, err, len(big), v3)
	}
	old := strings.Repeat("A", recordVersionLen)
	if err := os.WriteFile(recordFilePath(dir), []byte(old+"\nolder format"), 0o600); err != nil {
		t.Fatal(err)
	}
	if data, v, err := s.GetRecord(ctx, slotRecord); err != nil || string(data) != "older format" || v != old {
		t.Fatalf("record of the older format: %q, %q, %v", data, v, err)
	}
	v4, err := s.PutRecord(ctx, slotRecord, []byte("converted"), old)
	if err != nil {
		t.Fatal(err)
	}
	if data, v, err := s.GetRecord(ctx, slotRecord); err != nil || string(data) != "converted" || v != v4 {
		t.Fatalf("after converting: %q, %q, %v", data, v, err)
	}
	first, err := os.ReadFile(recordFilePath(dir))
	if err != nil || !isSlotFile(first) {
		t.Fatalf("the written file is not a slot file: %.12q, %v", first, err)
	}
}
