//go:build !race

package s3

import (
	"testing"

	"github.com/mcpblob/mcpblob/storage"
	"github.com/mcpblob/mcpblob/storage/storagetest"
)

// TestLargeMemory streams 1 GiB of unknown size to S3 (SeaweedFS) with the
// default part size, straight to the key and with Options.StagedCommit, and
// bounds the heap growth: the parts in flight and the one being filled, plus
// 16 MiB for everything else (30 MiB measured with 8 MiB parts, two in
// flight). Built without -race; run it with
// `go test -run 'Large|Memory|Crash' ./storage/...`.
func TestLargeMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("large stream: runs in the full leg of make test")
	}
	for _, staged := range []bool{false, true} {
		t.Run(map[bool]string{false: "direct", true: "staged"}[staged], func(t *testing.T) {
			storagetest.Suite{
				New:           func(t *testing.T) storage.Backend { return newStore(t, Options{StagedCommit: staged}) },
				LargeSize:     1 << 30,
				MaxHeapGrowth: (partsInFlight+1)*defaultPartSize + 16<<20,
			}.RunLarge(t)
		})
	}
}
