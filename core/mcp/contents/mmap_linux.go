package contents

import (
	"os"
	"syscall"
)

// mapSupported says this platform encodes files from mappings.
const mapSupported = true

// mapFile maps n bytes of f from off (page aligned) read-only, with the
// pages already in the page cache wired up front (MAP_POPULATE) so the
// encoder takes no page faults. The descriptor is used under the file's
// lock (SyscallConn), so a concurrent Close cannot hand its number to
// another file meanwhile.
func mapFile(f *os.File, off int64, n int) ([]byte, error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return nil, err
	}
	var m []byte
	var merr error
	err = rc.Control(func(fd uintptr) {
		m, merr = syscall.Mmap(int(fd), off, n, syscall.PROT_READ, syscall.MAP_SHARED|syscall.MAP_POPULATE)
	})
	if err != nil {
		return nil, err
	}
	return m, merr
}

func unmapFile(m []byte) { _ = syscall.Munmap(m) }
