// Package quota keeps per-principal quotas exact across nodes that share
// a store: bytes stored and objects, counted per namespace (package
// storage/namespace: a principal's share of the store under
// `--tenancy principal`).
//
// # Usage records
//
// Each namespace's usage is one record of the store (storage.Recorder,
// [RecordName]) holding the bytes and objects stored and the
// reservations of uploads in flight. Every change is a compare-and-swap
// on the record's version, retried on a fresh copy when another node
// changed it first, so the record is the one truth for every node.
//
// # Reservations
//
// An upload reserves before it stores: its declared size at once (so an
// upload that does not fit is refused before its first byte), or, for a
// size not declared, a step ahead of its bytes that doubles as they
// arrive (64 KiB first, at most 64 MiB at a time). A reservation is
// granted only while stored bytes plus every reservation stay within the
// quota, so concurrent uploads of one principal on any number of nodes
// never together exceed it: the bound is 0 bytes, declared or not. The
// cost is that an upload in flight may hold up to one step it does not
// use yet, which a concurrent upload near the limit cannot have.
//
// A reservation expires ([Ledger].HoldTTL, renewed as the upload goes
// on; a resumable upload's lives as long as StagedHoldTTL), so a node that
// crashed mid-upload does not keep the space. Commit turns the
// reservation into usage before the object becomes visible, and a
// delete gives the space back after the object is gone: a crash between
// the bytes and the record leaves the usage over the truth, never under.
// [Rebuild] recomputes it from the objects.
//
// # Wrapping
//
// [Wrap] puts the ledger in front of a backend: Create, the staged
// writes (storage.Stager) and Delete of raw keys inside a namespace are
// counted; every other key passes through. Errors past a quota wrap a
// *storage.QuotaError (storage.ErrQuotaExceeded).
package quota
