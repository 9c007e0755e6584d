//go:build !linux

package localfs

import (
	"errors"
	"os"
)

// beneath is the openat2 opener, Linux only: elsewhere the Store goes
// through its os.Root.
type beneath struct{}

func openBeneath(*os.Root) *beneath { return nil }

func (*beneath) close() error { return nil }

func (*beneath) statData(string) (version, error) {
	return version{}, errors.ErrUnsupported
}

func (*beneath) openData(string) (*os.File, version, error) {
	return nil, version{}, errors.ErrUnsupported
}

func (*beneath) openFile(string, int) (*os.File, error) {
	return nil, errors.ErrUnsupported
}
