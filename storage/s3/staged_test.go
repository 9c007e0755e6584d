package s3

import (
	"testing"

	"github.com/mcpblob/mcpblob/storage"
	"github.com/mcpblob/mcpblob/storage/storagetest"
)

// TestStagedVariants: staged writes with signed parts, and with
// StagedCommit (a staging key copied at commit), pass the suite's tests.
func TestStagedVariants(t *testing.T) {
	for name, opts := range map[string]Options{"signed": {SignPayloads: true}, "staged-commit": {StagedCommit: true}} {
		t.Run(name, func(t *testing.T) {
			opts.PartSize = testPartSize
			storagetest.Suite{New: func(t *testing.T) storage.Backend { return newStore(t, opts) }, PartSize: testPartSize}.RunStaged(t)
		})
	}
}
