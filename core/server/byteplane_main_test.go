package server

import (
	"testing"

	"github.com/mcpblob/mcpblob/storage/storagetest/miniotest"
)

// TestMain stops the shared MinIO server (started on first use by the S3
// byte-plane tests) after the tests.
func TestMain(m *testing.M) { miniotest.Main(m) }
