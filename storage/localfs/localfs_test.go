package localfs

import (
	"testing"

	"github.com/mcpblob/mcpblob/storage"
	"github.com/mcpblob/mcpblob/storage/storagetest"
)

func newStore(t *testing.T) *Store {
	t.Helper()
	s, err := Open(t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestConformance(t *testing.T) {
	storagetest.Suite{
		New:        func(t *testing.T) storage.Backend { return newStore(t) },
		LocalFiles: true,
	}.Run(t)
}
