package namespace_test

import (
	"crypto/rand"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcpblob/mcpblob/storage"
	"github.com/mcpblob/mcpblob/storage/localfs"
	"github.com/mcpblob/mcpblob/storage/namespace"
	"github.com/mcpblob/mcpblob/storage/s3"
	"github.com/mcpblob/mcpblob/storage/storagetest"
	"github.com/mcpblob/mcpblob/storage/storagetest/s3test"
)

func TestMain(m *testing.M) { s3test.Main(m) }

// principals the conformance suite runs as: a readable name and one that
// Name hashes.
var principals = []string{"alice@example.com", "Bob Smith / Ops"}

// neighbourKeys are stored for another principal and in the shared root
// before the suite starts: keys the suite itself uses, so that any leak
// across namespaces shows up as an unexpected listing, object or conflict.
var neighbourKeys = []string{"k", "a/b", "pc/a/b", "pc/x", "valid", "round/0-false", "d", "zz"}

// seeded returns a view of store for principal, after storing
// neighbourKeys in the shared root and in another principal's namespace. The
// store is closed when the test ends; the view's Close is a no-op.
func seeded(t *testing.T, store storage.Backend, principal string) storage.Backend {
	t.Helper()
	t.Cleanup(func() {
		if err := store.Close(); err != nil {
			t.Errorf("closing the store: %v", err)
		}
	})
	for _, b := range []storage.Backend{store, namespace.View(store, "neighbour")} {
		for _, key := range neighbourKeys {
			mustPut(t, b, key, "neighbour "+key)
		}
	}
	return namespace.View(store, principal)
}

func newLocal(t *testing.T) storage.Backend {
	t.Helper()
	s, err := localfs.Open(t.TempDir(), localfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestConformanceLocalFS(t *testing.T) {
	for _, p := range principals {
		t.Run(namespace.Name(p), func(t *testing.T) {
			storagetest.Suite{
				New:        func(t *testing.T) storage.Backend { return seeded(t, newLocal(t), p) },
				LocalFiles: true,
			}.Run(t)
		})
	}
}

const s3PartSize = 5 << 20 // S3's minimum

var buckets atomic.Int64

// newS3 opens an s3 Store on a new bucket of the shared SeaweedFS node (the
// real one from .tools/bin/weed, as the s3 package's own tests do).
func newS3(t *testing.T) *s3.Store {
	t.Helper()
	srv := s3test.Shared(t)
	bucket := "ns" + strings.ToLower(rand.Text()[:10]) + "-" + strconv.FormatInt(buckets.Add(1), 10)
	s, err := s3.Open(t.Context(), s3.Options{
		Endpoint: "http://" + srv.Endpoint, AccessKey: srv.AccessKey, SecretKey: srv.SecretKey,
		Bucket: bucket, CreateBucket: true, PartSize: s3PartSize,
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestConformanceS3 runs the suite on S3 as the principal whose name is hashed (the prefix
// with the most to get wrong: "=" and hex); both kinds of name run on the
// local store above, and what a view does to keys does not depend on the
// store under it. The S3 store's own suite is storage/s3's.
func TestConformanceS3(t *testing.T) {
	p := principals[1]
	t.Run(namespace.Name(p), func(t *testing.T) {
		storagetest.Suite{
			New:      func(t *testing.T) storage.Backend { return seeded(t, newS3(t), p) },
			PartSize: s3PartSize,
		}.Run(t)
	})
}
