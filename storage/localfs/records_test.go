package localfs

import (
	"context"
	"testing"
)

// TestRecordsSurviveReopen: records (a resumable upload's state and
// bytes) are kept by a store opened again on the folder, as after a crash,
// with their versions; the temporary file of a write is not left behind.
func TestRecordsSurviveReopen(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	v, err := s.PutRecord(ctx, "tus/u1/info", []byte("state"), "")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	data, got, err := s.GetRecord(ctx, "tus/u1/info")
	if err != nil || string(data) != "state" || got != v {
		t.Fatalf("after reopening: %q, %q, %v; want %q, %q", data, got, err, "state", v)
	}
	if _, err := s.PutRecord(ctx, "tus/u1/info", []byte("next"), v); err != nil {
		t.Fatalf("compare-and-swap after reopening: %v", err)
	}
	entries, err := s.readDir(tmpDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		t.Errorf("left in %s: %s", tmpDir, e.Name())
	}
}
