package s3

import (
	"crypto/rand"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcpblob/mcpblob/storage"
	"github.com/mcpblob/mcpblob/storage/storagetest"
	"github.com/mcpblob/mcpblob/storage/storagetest/s3test"
)

func TestMain(m *testing.M) { s3test.Main(m) }

const testPartSize = 5 << 20 // S3's minimum

var buckets atomic.Int64

// newStore opens a Store on a new bucket of the shared SeaweedFS node.
func newStore(t testing.TB, opts Options) *Store {
	t.Helper()
	srv := s3test.Shared(t)
	opts.Endpoint = "http://" + srv.Endpoint
	opts.AccessKey, opts.SecretKey = srv.AccessKey, srv.SecretKey
	if opts.Bucket == "" {
		opts.Bucket = newBucketName()
		opts.CreateBucket = true
	}
	s, err := Open(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func newBucketName() string {
	return "t" + strings.ToLower(rand.Text()[:10]) + "-" + strconv.FormatInt(buckets.Add(1), 10)
}

func TestConformance(t *testing.T) {
	storagetest.Suite{
		New:      func(t *testing.T) storage.Backend { return newStore(t, Options{PartSize: testPartSize}) },
		PartSize: testPartSize,
	}.Run(t)
}
