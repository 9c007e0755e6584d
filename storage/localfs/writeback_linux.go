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

// dropWritten waits until the n bytes at off of f are on the device and
// then drops them from the page cache. An upload thereby holds only a few
// chunks of dirty pages, whatever its size: it cannot flood memory with
// dirty data faster than the disk takes it, it does not evict the blobs
// being read, and its pages are reused for its next chunks. Failure is
// harmless for the same reason as in startWriteback.
func dropWritten(f *os.File, off, n int64) {
	fd := int(f.Fd())
	unix.SyncFileRange(fd, off, n, unix.SYNC_FILE_RANGE_WAIT_BEFORE|unix.SYNC_FILE_RANGE_WRITE|unix.SYNC_FILE_RANGE_WAIT_AFTER)
	unix.Fadvise(fd, off, n, unix.FADV_DONTNEED)
}

// syncData makes f's data durable, and its size, without its other
// metadata (fdatasync).
func syncData(f *os.File) error { return unix.Fdatasync(int(f.Fd())) }
