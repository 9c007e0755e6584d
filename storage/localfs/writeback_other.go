//go:build !linux

package localfs

import "os"

// startWriteback does nothing where sync_file_range is not available; the
// fsync at commit writes everything back.
func startWriteback(*os.File, int64, int64) {}

// dropWritten does nothing where sync_file_range is not available.
func dropWritten(*os.File, int64, int64) {}

// syncData makes f durable (fsync where fdatasync is not available).
func syncData(f *os.File) error { return f.Sync() }
