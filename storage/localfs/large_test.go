//go:build !race

package localfs

import (
	"testing"

	"github.com/mcpblob/mcpblob/storage"
	"github.com/mcpblob/mcpblob/storage/storagetest"
)

// TestLargeMemory streams 2 GiB of unknown size through a store and bounds
// the heap growth. Built without -race, which would only slow it down; run
// it with `go test -run 'Large|Memory|Crash' ./storage/...`.
func TestLargeMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("large stream: runs in the full leg of make test")
	}
	storagetest.Suite{
		New:        func(t *testing.T) storage.Backend { return newStore(t) },
		LocalFiles: true,
		LargeSize:  2 << 30,
	}.RunLarge(t)
}
