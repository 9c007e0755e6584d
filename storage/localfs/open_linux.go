package localfs

import (
	"os"

	"golang.org/x/sys/unix"
)

// beneath opens files below the Store's folder with one openat2 call that
// refuses to leave it (RESOLVE_BENEATH) or follow any symlink
// (RESOLVE_NO_SYMLINKS): the guarantee os.Root gives, without its walk of
// the path one folder at a time. Where openat2 is missing (Linux < 5.6, or
// a seccomp filter) the Store falls back to os.Root.
type beneath struct {
	dir *os.File
	fd  int
}

const resolveBeneath = unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS

// openBeneath returns the opener of root's folder, or nil when openat2 is
// not available.
func openBeneath(root *os.Root) *beneath {
	dir, err := root.Open(".")
	if err != nil {
		return nil
	}
	b := &beneath{dir: dir, fd: int(dir.Fd())}
	fd, err := b.openat2(".", unix.O_PATH)
	if err != nil {
		dir.Close()
		return nil
	}
	unix.Close(fd)
	return b
}

func (b *beneath) close() error { return b.dir.Close() }

// openat2 opens name with flags below the folder, with O_CLOEXEC and no
// symlink followed.
func (b *beneath) openat2(name string, flags int) (int, error) {
	how := unix.OpenHow{Flags: uint64(flags | unix.O_CLOEXEC | unix.O_NOFOLLOW), Resolve: resolveBeneath}
	for {
		fd, err := unix.Openat2(b.fd, name, &how)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return -1, &os.PathError{Op: "openat2", Path: name, Err: err}
		}
		return fd, nil
	}
}

// statData returns the version of the regular file name, without opening
// it for reading (an O_PATH handle never blocks on a FIFO).
func (b *beneath) statData(name string) (version, error) {
	fd, err := b.openat2(name, unix.O_PATH)
	if err != nil {
		return version{}, err
	}
	defer unix.Close(fd)
	return fstatVersion(fd, name)
}

// openData opens the regular file name for reading and returns its
// version. O_NONBLOCK keeps a foreign FIFO from blocking the open; it is
// cleared again for a regular file, which os.NewFile then leaves out of the
// network poller.
func (b *beneath) openData(name string) (*os.File, version, error) {
	fd, err := b.openat2(name, unix.O_RDONLY|unix.O_NONBLOCK)
	if err != nil {
		return nil, version{}, err
	}
	v, err := fstatVersion(fd, name)
	if err == nil {
		_, err = unix.FcntlInt(uintptr(fd), unix.F_SETFL, unix.O_RDONLY)
	}
	if err != nil {
		unix.Close(fd)
		return nil, version{}, err
	}
	return os.NewFile(uintptr(fd), name), v, nil
}

// fstatVersion returns the version of the open regular file fd; a file of
// another kind is reported as missing (a nil error to notFound).
func fstatVersion(fd int, name string) (version, error) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return version{}, &os.PathError{Op: "fstat", Path: name, Err: err}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return version{}, errNotRegular
	}
	return version{size: st.Size, mtime: st.Mtim.Nano()}, nil
}

// openFile opens the existing file name with flags (O_RDONLY, O_WRONLY or
// O_RDWR) in one call.
func (b *beneath) openFile(name string, flags int) (*os.File, error) {
	fd, err := b.openat2(name, flags)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), name), nil
}
