//go:build !race

// Package race tells the race detector which memory assembly code touches.
// The detector cannot see accesses made by assembly, so callers annotate the
// ranges before the call (the klauspost/compress internal/race idea). Without
// the race build tag the functions are empty and inlined away.
package race

// Enabled reports whether the race detector is on.
const Enabled = false

// ReadSlice records a read of every byte of s.
func ReadSlice[T any](s []T) {}

// WriteSlice records a write of every byte of s.
func WriteSlice[T any](s []T) {}
