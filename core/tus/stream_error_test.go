package tus

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/mcpblob/mcpblob/storage"
)

// A staged write gone under a PATCH (another PATCH at the same offset
// completed the upload, or a termination) is the client's conflict, 409,
// like a lost compare-and-swap; not a server fault.
func TestStoreErrorStagedGone(t *testing.T) {
	for _, err := range []error{storage.ErrPreconditionFailed, fmt.Errorf("localfs: write staged part 1: %w", storage.ErrStagedGone)} {
		if e := storeError(err); e == nil || e.Status != http.StatusConflict {
			t.Errorf("storeError(%v) = %+v; want 409", err, e)
		}
	}
}
