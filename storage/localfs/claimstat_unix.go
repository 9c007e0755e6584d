//go:build unix

package localfs

import (
	"errors"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// holdClaimDirs is true where claimExists works: Claimed then keeps the
// sets' folders open.
const holdClaimDirs = true

// claimExists reports whether the claim file name exists in dir (a set's
// folder). name is one validated path element and symlinks are not
// followed, so the check cannot leave dir.
func claimExists(dir *os.File, name string) (bool, error) {
	var st unix.Stat_t
	err := unix.Fstatat(int(dir.Fd()), name, &st, unix.AT_SYMLINK_NOFOLLOW)
	if errors.Is(err, syscall.ENOENT) {
		return false, nil
	}
	return err == nil, err
}
