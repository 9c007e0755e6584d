package localfs

import (
	"encoding/binary"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// readDirEntries returns the regular files and folders in the directory f,
// read with getdents64: os.File.ReadDir on a file opened in an os.Root stats
// every entry, which made reading a folder of 100,000 objects several times
// slower. Entries whose type the file system does not report are stated.
func readDirEntries(f *os.File) ([]entry, error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return nil, err
	}
	var out []entry
	var unknown []string
	buf := make([]byte, 64<<10)
	for {
		var n int
		var gerr error
		err := rc.Read(func(fd uintptr) bool {
			n, gerr = unix.Getdents(int(fd), buf)
			return true
		})
		if err == nil && gerr != syscall.EINTR {
			err = gerr
		}
		switch {
		case gerr == syscall.EINTR:
			continue
		case err != nil:
			return nil, err
		case n <= 0:
			return statUnknown(rc, out, unknown)
		}
		out, unknown = appendDirents(out, unknown, buf[:n])
	}
}

// statUnknown appends to out the names in unknown that are regular files or
// folders, stating them (without following symbolic links) in the directory
// rc.
func statUnknown(rc syscall.RawConn, out []entry, unknown []string) ([]entry, error) {
	for _, name := range unknown {
		var st unix.Stat_t
		var serr error
		err := rc.Control(func(fd uintptr) {
			serr = unix.Fstatat(int(fd), name, &st, unix.AT_SYMLINK_NOFOLLOW)
		})
		if err == nil {
			err = serr
		}
		switch {
		case err == syscall.ENOENT:
		case err != nil:
			return nil, err
		case st.Mode&unix.S_IFMT == unix.S_IFREG:
			out = append(out, entry{name: name})
		case st.Mode&unix.S_IFMT == unix.S_IFDIR:
			out = append(out, entry{name: name, dir: true})
		}
	}
	return out, nil
}

// linux_dirent64: d_ino (8 bytes), d_off (8), d_reclen (2), d_type (1),
// d_name (NUL-terminated, padded to reclen).
const direntNameOffset = 19

// appendDirents appends the regular files and folders of a getdents64
// buffer to out, and the names of unknown type to unknown.
func appendDirents(out []entry, unknown []string, b []byte) ([]entry, []string) {
	for len(b) > direntNameOffset {
		reclen := int(binary.NativeEndian.Uint16(b[16:18]))
		if reclen <= direntNameOffset || reclen > len(b) {
			break // malformed: the kernel never sends this
		}
		name := b[direntNameOffset:reclen]
		for i, c := range name {
			if c == 0 {
				name = name[:i]
				break
			}
		}
		switch typ := b[18]; {
		case len(name) == 0, string(name) == "." || string(name) == "..":
		case typ == unix.DT_REG, typ == unix.DT_DIR:
			out = append(out, entry{name: string(name), dir: typ == unix.DT_DIR})
		case typ == unix.DT_UNKNOWN:
			unknown = append(unknown, string(name))
		}
		b = b[reclen:]
	}
	return out, unknown
}
