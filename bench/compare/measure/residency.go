package measure

import (
	"fmt"
	"io"
	"os"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Residency is the share of a file's pages held in the page cache, read
// with mincore(2) on a read-only mapping of the whole file (the mapping
// itself reads nothing from the disk).
func Residency(path string) (float64, error) {
	mem, unmap, err := mapFile(path)
	if err != nil {
		return 0, err
	}
	if mem == nil {
		return 1, nil // an empty file is all there
	}
	defer unmap()
	page := os.Getpagesize()
	vec := make([]byte, (len(mem)+page-1)/page)
	if err := mincore(mem, vec); err != nil {
		return 0, fmt.Errorf("mincore %s: %w", path, err)
	}
	resident := 0
	for _, v := range vec {
		resident += int(v & 1)
	}
	return float64(resident) / float64(len(vec)), nil
}

// mapFile maps path whole, read-only and shared (nothing is read from
// the disk until a page is touched); an empty file maps to nil.
func mapFile(path string) (mem []byte, unmap func(), err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || fi.Size() == 0 {
		return nil, func() {}, err
	}
	mem, err = syscall.Mmap(int(f.Fd()), 0, int(fi.Size()), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, nil, fmt.Errorf("mmap %s: %w", path, err)
	}
	return mem, func() { syscall.Munmap(mem) }, nil
}

// WarmFile reads path to the end through the page cache, so its pages
// are resident before a timed run.
func WarmFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.CopyBuffer(io.Discard, struct{ io.Reader }{f}, make([]byte, 1<<20))
	return err
}

// DropFile evicts path's clean pages from the page cache (fadvise
// DONTNEED, after sync(2) so no page is still dirty), the state the local
// store's writer leaves a blob in.
func DropFile(path string) error {
	SettleDisk()
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED)
}

// mincore fills vec with one byte per page of mem, bit 0 set when the page
// is resident (neither syscall nor x/sys/unix wraps it on Linux).
func mincore(mem, vec []byte) error {
	_, _, errno := syscall.Syscall(syscall.SYS_MINCORE, uintptr(unsafe.Pointer(&mem[0])), uintptr(len(mem)), uintptr(unsafe.Pointer(&vec[0])))
	if errno != 0 {
		return errno
	}
	return nil
}
