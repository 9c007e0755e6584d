package localfs

import (
	"os"

	"golang.org/x/sys/unix"
)

// startWriteback asks the kernel to begin writing the n bytes at off of f to
// the device, without waiting for it. Spreading writeback over the upload
// this way leaves Commit's fsync little to do: the disk works while the
// bytes still arrive instead of after the last one. Failure is harmless (the
// fsync at commit still makes the file durable), so it is not reported.
func startWriteback(f *os.File, off, n int64) {
	unix.SyncFileRange(int(f.Fd()), off, n, unix.SYNC_FILE_RANGE_WRITE)
}
