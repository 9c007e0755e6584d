// Package storagetest is the conformance suite every storage.Backend passes,
// in the manner of testing/fstest.TestFS:
//
//	func TestConformance(t *testing.T) {
//		storagetest.Run(t, func(t *testing.T) storage.Backend { return newEmptyStore(t) })
//	}
//
// [Run] (or [Suite.Run] for backend-specific settings) covers round trips of
// sizes from 0 bytes to a few part sizes, metadata, ranges, paginated
// listing, overwrites, concurrent writers to one key, Abort, closed writers,
// every kind of invalid key, size limits, IfNotExists, Delete, missing
// objects and cancelled contexts, and, when the backend has them, claims
// and records (one winner of each compare-and-swap race, readers never
// failing meanwhile). Each subtest asks for a fresh, empty
// backend, runs in parallel with the others, and closes the backend when it
// ends. Failures are reported with errors.Is against the storage sentinels.
//
// [Suite.RunLarge] streams a multi-gigabyte object of unknown size (see
// [Stream]) through the backend, checks its SHA-256 and a range near the
// end, and bounds the heap growth during the upload. It is skipped with
// -short; backends run it in a test file built without -race.
package storagetest
