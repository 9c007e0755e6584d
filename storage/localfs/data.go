package localfs

import (
	"errors"
	"os"
	"syscall"
)

// statData returns the version of key's data file; ErrNotFound when there
// is none or the name is not a regular file.
func (s *Store) statData(key string) (version, error) {
	if s.beneath != nil {
		v, err := s.beneath.statData(key)
		return v, dataErr(err)
	}
	fi, err := s.root.Lstat(key)
	if err != nil || !fi.Mode().IsRegular() {
		return version{}, notFound(err)
	}
	return versionOf(fi), nil
}

// openData opens key's data file for reading and returns its version;
// ErrNotFound when there is none or the name is not a regular file.
func (s *Store) openData(key string) (*os.File, version, error) {
	if s.beneath != nil {
		f, v, err := s.beneath.openData(key)
		return f, v, dataErr(err)
	}
	// Lstat first so that a foreign FIFO or device is never opened.
	if fi, err := s.root.Lstat(key); err != nil || !fi.Mode().IsRegular() {
		return nil, version{}, notFound(err)
	}
	f, err := s.root.Open(key)
	if err != nil {
		return nil, version{}, notFound(err)
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = errNotRegular
	}
	if err != nil {
		f.Close()
		return nil, version{}, dataErr(err)
	}
	return f, versionOf(fi), nil
}

// dataErr maps the error of opening a data file as notFound does; a symlink
// on the way (refused, never followed) and a name that is not a regular
// file are ErrNotFound too.
func dataErr(err error) error {
	if errors.Is(err, errNotRegular) || errors.Is(err, syscall.ELOOP) || errors.Is(err, syscall.EXDEV) {
		return notFound(nil)
	}
	if err == nil {
		return nil
	}
	return notFound(err)
}
