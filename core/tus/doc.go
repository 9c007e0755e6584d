// Package tus serves resumable uploads, tus 1.0.0
// (https://tus.io/protocols/resumable-upload), independent of the
// transport: a surface turns its HTTP request into a Request, calls
// Handler.Serve and writes the Response (a refusal carries an error code
// and message for the surface's JSON error body).
//
// Served: the core protocol (HEAD, PATCH, OPTIONS; Tus-Resumable,
// Upload-Offset, Upload-Length, Tus-Version, Tus-Extension, Tus-Max-Size)
// and the extensions creation, creation-with-upload, creation-defer-length,
// termination, expiration, checksum (sha1, sha256, crc32c) and
// concatenation. Statuses: a wrong offset 409, a missing or other
// Tus-Resumable 412, a checksum mismatch 460 (nothing appended), past
// Upload-Length or Tus-Max-Size 413, an unknown upload (or someone
// else's) 404, an expired one 410 and then 404, a malformed header 400, a
// final upload naming someone else's upload 403 or an unfinished one 400.
//
// State (state.go): each upload is a storage record (storage.Recorder)
// holding its offset, length, metadata, owner, expiry and the segments
// that hold its bytes, in order. The record is replaced by
// compare-and-swap only, so nodes sharing a store need nothing else to
// agree: of two PATCHes at one offset, on one node or two, the first to
// commit appends and the other gets 409 (append.go). A node keeps a copy
// of the record it last wrote (recent.go) so that a PATCH on S3 following
// one there reads none; a stale copy fails the compare-and-swap that
// takes the PATCH's part numbers, and the PATCH then reads the record.
//
// Bytes (append.go): an upload that names its object when created is
// staged (Config.Stager, storage.Stager): its bytes go where the object
// will live, once (S3: the object's multipart upload; the local store:
// one file, fsynced at each acknowledged chunk). Its segments are parts
// of the staged write, and at most one last record: a tail shorter than
// the store's part minimum (S3's 5 MiB), which the next PATCH reads back
// and writes with its own bytes as one part. A part goes to the store as
// its bytes arrive (stream.go), hashed beside the writes: the local store
// writes each 1 MiB piece into the file (storage.StagedStreamer) and S3
// gets one part upload reading the body (storage.StagedSender, for a part
// whose size the Content-Length tells); either way it is durable before
// a record names it. A request takes the part
// numbers it writes by compare-and-swap first (or, on the local store, a
// PATCH of one part claims the next number from the store in memory), so
// no two requests write one part; on S3 the part upload starts beside
// that compare-and-swap, under the number it will take, and its last
// byte (without which S3 stores nothing) waits for it; a part is written (durable) before the record names it, so
// HEAD reports only durable bytes, and a part no record names is garbage,
// overwritten by the next writer or removed with the staged write. The
// record also keeps the SHA-256 state of the bytes and their first
// HeadLen bytes, so completion needs no pass over them. Where the store
// reads its staged bytes back (the local store, storage.StagedReader) the
// state may cover only a prefix of them: a PATCH answers once its bytes
// are durable, its hashing goes on after the answer from the staged file
// (hashing.go), and a node without that state catches up from the file. A partial upload
// of a concatenation names no object: its segments are records, as are
// every upload's on a store without staged writes. Memory
// per PATCH is one segment buffer (Config.SegmentSize), whatever the
// upload's size.
//
// Completion (finish.go): once every byte arrived, Config.Complete gets
// the staged write to commit through the surface's one ingest path (its
// checks, then storage.Stager.CommitStaged: the object's bytes are not
// copied), or, for a final upload of a concatenation, a reader of the
// partial uploads' records to store through it (concatenation costs one
// copy). Only then is the object visible. A completion failing on the
// server's side keeps the upload for the next HEAD or PATCH to finish.
//
// Expiry (sweep.go): an upload lives Config.TTL after its last change
// (Upload-Expires). A request meeting an expired one answers 410 and
// removes it (its records and its staged write); Handler.Sweep removes
// the others, on any number of nodes at once, marking each expired by
// compare-and-swap before removing it.
//
// Parsers of client bytes (parse.go) have fuzz targets.
package tus
