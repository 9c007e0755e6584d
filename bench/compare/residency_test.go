package main

import (
	"os"
	"path/filepath"
	"testing"
)

func TestResidencyFollowsWarmAndDrop(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(path, make([]byte, 4<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := warmFile(path); err != nil {
		t.Fatal(err)
	}
	warm, err := residency(path)
	if err != nil {
		t.Fatal(err)
	}
	if warm < 0.99 {
		t.Fatalf("after reading the whole file %.2f of it is cached, want all", warm)
	}
	if err := dropFile(path); err != nil {
		t.Fatal(err)
	}
	cold, err := residency(path)
	if err != nil {
		t.Fatal(err)
	}
	if cold > 0.5 {
		t.Skipf("fadvise DONTNEED left %.2f cached: this file system keeps its pages (tmpfs?)", cold)
	}
}
