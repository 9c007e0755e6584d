//go:build race

// Package race tells the race detector which memory assembly code touches.
// The detector cannot see accesses made by assembly, so callers annotate the
// ranges before the call (the klauspost/compress internal/race idea). Without
// the race build tag the functions are empty and inlined away.
package race

import (
	"runtime"
	"unsafe"
)

// Enabled reports whether the race detector is on.
const Enabled = true

// ReadSlice records a read of every byte of s.
func ReadSlice[T any](s []T) {
	if len(s) == 0 {
		return
	}
	runtime.RaceReadRange(unsafe.Pointer(unsafe.SliceData(s)), len(s)*int(unsafe.Sizeof(s[0])))
}

// WriteSlice records a write of every byte of s.
func WriteSlice[T any](s []T) {
	if len(s) == 0 {
		return
	}
	runtime.RaceWriteRange(unsafe.Pointer(unsafe.SliceData(s)), len(s)*int(unsafe.Sizeof(s[0])))
}
