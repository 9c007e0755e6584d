//go:build unix

package localfs

import (
	"errors"
	"os"
	"syscall"
)

// lockFile takes an exclusive advisory lock on f, held until f is closed (or
// the process dies).
func lockFile(f *os.File) error {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return ErrLocked
	}
	return err
}
