// Package storage defines the Backend interface every mcpblob store implements,
// the Info metadata record, key rules, and the sentinel errors callers test with
// errors.Is.
//
// Besides objects, a backend may keep bookkeeping of the server's own below
// ReservedDir, never listed and unreachable by key: Claimer (one-time facts
// created only if absent) and Recorder (records replaced by compare-and-swap,
// as S3's If-Match and If-None-Match on PUT do it: the state of resumable
// uploads). RecorderOf finds a wrapped backend's records. A Stager writes
// an object in parts that any node can add to and commits them without a
// copy (the bytes of resumable uploads); StagerOf finds a wrapped
// backend's, MemStager stands in for tests.
//
// Backends live in sub-packages: localfs (the embedded default) and s3 (any S3
// through minio-go). storagetest is the conformance suite every backend passes.
package storage
