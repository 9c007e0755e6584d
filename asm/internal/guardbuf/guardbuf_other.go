//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

// Package guardbuf allocates test buffers between inaccessible pages; on this
// platform it has no guard pages and [New] returns an error.
package guardbuf

import "errors"

// Supported reports whether guard pages work on this platform.
const Supported = false

// Buffer is unsupported on this platform.
type Buffer struct{}

// New returns an error: guard pages are not supported here.
func New(size int) (*Buffer, error) {
	return nil, errors.New("guardbuf: not supported on this platform")
}

// Head panics: guard pages are not supported here.
func (b *Buffer) Head(n int) []byte { panic("bug: guardbuf: unsupported") }

// Tail panics: guard pages are not supported here.
func (b *Buffer) Tail(n int) []byte { panic("bug: guardbuf: unsupported") }

// Close does nothing.
func (b *Buffer) Close() error { return nil }
