// Package s3 stores objects in an S3 bucket (AWS S3, SeaweedFS, MinIO or
// any S3 compatible service) through minio-go; it is the only package in
// mcpblob that imports minio-go. [Open] connects and checks (or creates)
// the bucket. The Store implements storage.Backend and storage.Presigner.
// It is written to the S3 API as AWS documents it; where a service answers
// otherwise, compat.go handles it, in one place, and lists each difference
// with the service it was seen on. The tests run on SeaweedFS
// (storage/storagetest/s3test).
//
// # Keys and metadata
//
// An object's key is its S3 key. The media type is the object's
// Content-Type; the filename is user metadata (x-amz-meta-filename, percent
// encoded, so any UTF-8 survives the header), and so is an expiry
// (x-amz-meta-expires-ms, Unix milliseconds; storage/lifecycle acts on it,
// S3 itself does not). Info.ETag is the S3 ETag,
// quoted. The SHA-256 (lower-case hex) of an object sent in one PUT is user
// metadata too (x-amz-meta-sha256); that of an object streamed in several
// parts is in a record, see Uploads. Objects written by other tools (for
// example through a presigned PUT) have an empty Info.SHA256. Keys under
// [storage.ReservedDir] are invalid; the Store keeps its own objects there:
// SHA-256 records (.mcpblob/sha256/) and, with Options.StagedCommit, staged
// uploads (.mcpblob/tmp/). S3 has no folders, but the Store keeps the rule
// of every backend that an object "a" and objects "a/…" exclude each other:
// Create and Commit check the key's parents (a HEAD each) and what lies
// under it (one LIST) and fail with a [*storage.PathConflictError]; writers
// of conflicting keys that race each other may both succeed.
//
// # Uploads
//
// A Writer hashes what it is given into a buffer of Options.PartSize bytes
// (8 MiB by default) and, once a part is full and more bytes follow,
// uploads it in the background while it fills the next buffer, two parts in
// flight. With one, the service sat idle while the next part filled: on one
// local MinIO drive 1 GiB went at about 365 MB/s with one part in flight,
// 515 with two (three added nothing) and 458 through minio-go's PutObject,
// which sends four (BenchmarkThroughput; the service's CPU per GiB is about
// 2.2 s, against 2.6 s with signed parts and 3.0 s for minio-go's). Memory
// stays at three parts per upload (24 MiB) whatever the size, known or not
// (minio-go's own PutObject buffers a 528 MiB part for an upload of unknown
// size). The Store keeps up to three part buffers between uploads in a free
// list (a sync.Pool lets the collector drop them, so that every upload
// after a collection allocates anew). S3 allows 10,000 parts: an upload
// whose declared size needs more takes the smallest part size that fits,
// and one of unknown size doubles its part size every 2,000 parts (with 8
// MiB parts: 15.6 GiB in 8 MiB parts, 484 GiB in all); only such large
// uploads use larger buffers.
//
// An object that fits in one part is sent at Commit in a single PUT with
// its metadata and SHA-256; the payload is signed with its SHA-256, which
// the server verifies.
//
// A larger one is streamed part by part as a multipart upload of the key
// itself, so the service writes each byte once. Each part goes as
// UNSIGNED-PAYLOAD with its CRC32C (x-amz-checksum-crc32c, announced when
// the upload starts and listed at its completion), which the service
// verifies: a part damaged in transit is refused and the upload fails.
// The CRC is computed as Write copies the bytes, at hardware speed; signing
// each part with its SHA-256 instead (Options.SignPayloads, the former
// default) hashes every byte twice here, once for the part and once for
// the object, and once more on the service, for a guarantee that covered
// only half of the path: reads over plain HTTP are not protected at all. A
// CRC guards against accidents, not against an attacker on the network;
// where the network is not trusted, use an https endpoint, which guards
// both directions (minio-go sends payloads unsigned over TLS in any case).
// The object's SHA-256 is kept as below whatever the mode.
//
// S3 takes an object's metadata when its upload starts, before the SHA-256
// is known, so the upload's metadata holds a random token instead
// (x-amz-meta-sha256-record), and Commit, once the last part is sent:
//
//  1. writes the upload's record, an empty object .mcpblob/sha256/<token>
//     whose metadata holds the SHA-256 and the key;
//  2. completes the multipart upload: the object appears under the key,
//     with its record already there;
//  3. tags the object with the token and the SHA-256 (mcpblob-upload,
//     mcpblob-sha256). Tags are only a shortcut for List (MinIO lists tags
//     with the metadata): writers racing on a key may tag each other's
//     objects, so readers use the tags only when their token is the one in
//     the object's metadata, else they read the record. A service without
//     object tagging just makes List read records;
//  4. deletes the record of the object it replaced, if any.
//
// Stat and Open of such an object cost one more request, a HEAD of the
// record (an object replaced between the two is read again). A record
// deleted by hand leaves its object readable with an empty SHA-256.
// Records outlive their objects when a process dies between steps 1 and 2,
// when writers race on a key, or when a small object or another tool
// replaces or deletes a large one; Open removes such records once they are
// older than Options.StaleAfter, checking up to 1,000 of them (a HEAD of
// the key each) from a random place per Open.
//
// Options.StagedCommit restores the former path, for readers of the bucket
// other than this package that need x-amz-meta-sha256 on every object: the
// parts go to a staging key under .mcpblob/tmp/ and Commit copies the
// staged object server side, in parts of up to 512 MiB, into a multipart
// upload of the key that carries the final metadata, then deletes it. The
// service then writes every byte twice: on one local MinIO drive, 1 GiB
// took about 4.1 s staged, 2.1 s direct, and 2.6 s through minio-go's own
// PutObject (BenchmarkThroughput).
//
// Either way the key changes in one step when the PUT or the final
// CompleteMultipartUpload succeeds: readers never see a partial object or
// an object without its SHA-256, and of concurrent writers the last to
// complete wins. IfNotExists sends If-None-Match: * with the PUT or with
// the completion of the multipart upload of the key (and, staged, with its
// initiation); the server's 412 becomes storage.ErrExists.
//
// Abort, a failed Write (size limits, a cancelled Create context) and a
// failed Commit abort the multipart uploads they started and delete the
// staged object, and the record when the service refused the completion
// (when its outcome is unknown, Open's sweep removes the record). Uploads orphaned by a crashed process are
// removed by Open once they are older than Options.StaleAfter (24 hours by
// default, so that other nodes' uploads in progress are left alone); a
// bucket lifecycle rule that aborts incomplete multipart uploads is a good
// complement.
//
// # Reading, listing, presigning
//
// Open issues one GET (with a Range header for a range) and returns the
// response body as it is; the object's total size comes from
// Content-Range. Reading 1 GiB through it matches a plain net/http GET of
// a presigned URL in time and CPU (BenchmarkThroughput), and a larger
// transport read buffer made no measurable difference, so the Store adds
// no read-ahead or transport tuning. A range
// that starts past the end gives storage.ErrInvalidRange. Stat is a HEAD.
// Delete checks that the object exists first (S3 deletes silently), so it
// is two requests (three with a record to delete). List uses ListObjectsV2
// and asks for metadata and tags in the listing (metadata=true, a MinIO
// extension); on services that ignore that, it falls back to a HEAD per
// listed object (and one of the record of an object streamed in parts).
// A cursor holds the page's last key and the service's continuation token,
// so the next page continues the service's listing (MinIO otherwise walks
// the bucket again for every page: a page of 100 from 100,000 keys took
// up to 600 ms). When the service rejects the token (expired, forged, from
// another service) or the cursor holds a key alone, List starts after the
// key (StartAfter). The last page has no cursor, but a cursor may lead to
// an empty page when only objects List skips follow. When the listing
// reaches the Store's own objects under .mcpblob/, List continues past
// them with one request instead of paging through them.
//
// Presigned URLs are computed offline (Options.Region is always set, so
// minio-go never looks up the bucket's location) by a second client that
// shares the credentials and points at Options.PublicEndpoint, the address
// clients use. PresignGet can override the response Content-Type and
// Content-Disposition; PresignPut signs the Content-Type header when one is
// given, so the uploader must send exactly that type.
//
// A staged write (storage.Stager, staged.go) is a multipart upload begun
// as a Writer begins one (of the key with its SHA-256 record's token, or
// with Options.StagedCommit of a staging key); its id names the token,
// the upload and the key, so any Store on the bucket continues it.
// PutStaged is UploadPart (CRC32C or signed as Writers' parts are).
// SendStaged (storage.StagedSender; not with Options.SignPayloads) is an
// UploadPart of known length whose body is read as it arrives (a tus
// PATCH's), its CRC32C computed on the way and sent in a trailer
// (STREAMING-UNSIGNED-PAYLOAD-TRAILER), so the part is on the service
// almost as soon as its last byte came in. Part numbers past 10,000 are
// refused with storage.ErrTooLarge. CommitStaged completes the upload as Writer.Commit does, with the
// caller's SHA-256, and a staged write of no parts becomes an empty
// object by one PUT. Open's removal of stale uploads (Options.StaleAfter)
// aborts a staged write only when none of its parts is younger than that
// age: one a resumable upload still writes to stays, however old.
package s3
