package s3

// This file is the one place where the Store meets S3 services that answer
// differently from AWS S3. The Store is written to the S3 API as AWS
// documents it; each difference below is handled here, for any service that
// answers so, without asking which service it talks to. Each names the
// service it was seen on (SeaweedFS: the pinned build the tests run,
// storage/storagetest/s3test; MinIO: the server the tests ran on before).
//
//   - Continuation tokens. AWS hands out opaque ASCII tokens, and so does
//     MinIO; SeaweedFS's NextContinuationToken is the last listed key
//     itself, bare, with its spaces and UTF-8 (up to the key's 1,024
//     bytes). A cursor carries only tokens of printable ASCII
//     (validListToken), so [cursorToken] drops any other: the cursor then
//     holds the key alone and the next page lists after it (StartAfter),
//     which every service answers alike.
//   - Listed metadata. MinIO lists each object's metadata and tags when
//     asked (metadata=true, its extension); AWS and SeaweedFS ignore the
//     parameter, and List falls back to a HEAD per listed object
//     (listedInfo), which costs requests, not correctness.
//
// Checked on SeaweedFS and found as AWS documents them (each has its test):
// If-None-Match: * on PUT and on CompleteMultipartUpload (the conformance
// suite's IfNotExists; claims exact under concurrency:
// TestClaimExactUnderConcurrency), CRC32C checksums of UNSIGNED-PAYLOAD
// parts verified (TestPartsGuardedInTransit), NoSuchKey, PreconditionFailed
// and InvalidRange, and "a" stored beside "a/b" as on AWS
// (TestPathConflictRaced).

// cursorToken returns the service's continuation token when a cursor can
// carry it, else "" (see the file's comment).
func cursorToken(token string) string {
	if !validListToken(token) {
		return ""
	}
	return token
}
