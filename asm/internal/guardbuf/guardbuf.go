//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

// Package guardbuf allocates test buffers that sit between two inaccessible
// (PROT_NONE) pages, so that any read or write just outside a slice handed
// out by [Buffer.Head] or [Buffer.Tail] faults and kills the test. It is a
// test helper for the assembly kernels of package asm (the segmentio/asm
// internal/buffer idea).
package guardbuf

import (
	"fmt"
	"golang.org/x/sys/unix"
	"os"
)

// Supported reports whether guard pages work on this platform.
const Supported = true

// Buffer is a mapping of one guard page, the data pages and one more guard
// page. It is not safe for concurrent use with Close.
type Buffer struct {
	mem  []byte // the whole mapping
	data []byte // the accessible pages between the guards
}

// New maps a buffer with at least size accessible bytes.
func New(size int) (*Buffer, error) {
	page := os.Getpagesize()
	n := (size + page - 1) / page * page
	if n == 0 {
		n = page
	}
	mem, err := unix.Mmap(-1, 0, n+2*page, unix.PROT_NONE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		return nil, fmt.Errorf("guardbuf: mmap: %w", err)
	}
	data := mem[page : page+n]
	if err := unix.Mprotect(data, unix.PROT_READ|unix.PROT_WRITE); err != nil {
		unix.Munmap(mem)
		return nil, fmt.Errorf("guardbuf: mprotect: %w", err)
	}
	return &Buffer{mem: mem, data: data}, nil
}

// Head returns an n-byte slice (cap n) starting at the first accessible byte,
// right after the leading guard page. It panics when n exceeds the buffer.
func (b *Buffer) Head(n int) []byte { return b.data[:n:n] }

// Tail returns an n-byte slice (cap n) ending at the last accessible byte,
// right before the trailing guard page. It panics when n exceeds the buffer.
func (b *Buffer) Tail(n int) []byte {
	off := len(b.data) - n
	return b.data[off : off+n : off+n]
}

// Close unmaps the buffer. Slices handed out must not be used afterwards.
func (b *Buffer) Close() error {
	if b.mem == nil {
		return nil
	}
	err := unix.Munmap(b.mem)
	b.mem, b.data = nil, nil
	return err
}
