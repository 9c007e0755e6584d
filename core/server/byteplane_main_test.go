package server

import (
	"testing"

	"github.com/mcpblob/mcpblob/storage/storagetest/s3test"
)

// TestMain stops the shared SeaweedFS node (started on first use by the S3
// byte-plane tests) after the tests.
func TestMain(m *testing.M) { s3test.Main(m) }
