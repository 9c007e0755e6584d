// Package storage defines the Backend interface every mcpblob store implements,
// the Info metadata record, key rules, and the sentinel errors callers test with
// errors.Is.
//
// Backends live in sub-packages: localfs (the embedded default) and s3 (any S3
// through minio-go). storagetest is the conformance suite every backend passes.
package storage
