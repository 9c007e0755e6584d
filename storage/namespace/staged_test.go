package namespace_test

import (
	"testing"

	"github.com/mcpblob/mcpblob/storage"
	"github.com/mcpblob/mcpblob/storage/namespace"
)

// TestStagedFastPathsForwarded: a view's Stager offers the backend's
// fast paths (streamed writes, parts sent as they arrive, claims in
// memory), so tus in a namespace takes the same path as in the raw store.
func TestStagedFastPathsForwarded(t *testing.T) {
	for name, raw := range map[string]storage.Backend{"local": newLocal(t), "s3": newS3(t)} {
		in, out := storage.StagerOf(raw), storage.StagerOf(namespace.View(raw, "alice"))
		if in == nil || out == nil {
			t.Fatalf("%s: Stager: store %v, view %v", name, in != nil, out != nil)
		}
		for what, has := range map[string][2]bool{
			"StagedStreamer": {storage.StreamerOf(in) != nil, storage.StreamerOf(out) != nil},
			"StagedSender":   {storage.SenderOf(in) != nil, storage.SenderOf(out) != nil},
			"StagedClaimer":  {storage.ClaimerOf(in) != nil, storage.ClaimerOf(out) != nil},
		} {
			if has[0] != has[1] {
				t.Errorf("%s: %s: the store has one: %v, the view: %v", name, what, has[0], has[1])
			}
		}
	}
}
