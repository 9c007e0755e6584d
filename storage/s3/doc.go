// Package s3 stores objects in an S3 bucket (MinIO, AWS S3, or any S3
// compatible service) through minio-go; it is the only package in mcpblob
// that imports minio-go. [Open] connects and checks (or creates) the bucket.
// The Store implements storage.Backend and storage.Presigner.
//
// # Keys and metadata
//
// An object's key is its S3 key. The media type is the object's
// Content-Type; the SHA-256 (lower-case hex) and the filename (percent
// encoded, so any UTF-8 survives the header) are user metadata
// (x-amz-meta-sha256, x-amz-meta-filename). Info.ETag is the S3 ETag, quoted.
// Objects written by other tools (for example through a presigned PUT) have
// an empty Info.SHA256. Keys under [storage.ReservedDir] are invalid; the
// Store keeps staged uploads there (.mcpblob/tmp/). S3 has no folders, but
// the Store keeps the rule of every backend that an object "a" and objects
// "a/…" exclude each other: Create and Commit check the key's parents (a
// HEAD each) and what lies under it (one LIST) and fail with a
// [*storage.PathConflictError]; writers of conflicting keys that race each
// other may both succeed.
//
// # Uploads
//
// A Writer hashes what it is given into a buffer of Options.PartSize bytes
// (16 MiB by default) and, once a part is full and more bytes follow,
// uploads it in the background while it fills a second buffer. Memory stays
// at two parts per upload whatever the size, known or not (minio-go's own
// PutObject buffers a 528 MiB part for an upload of unknown size). The
// SHA-256 must be in the object's metadata, and S3 takes metadata when an
// upload starts, before the hash is known. So:
//
//   - an object that fits in one part is sent at Commit in a single PUT with
//     its final metadata; the payload is signed with its SHA-256, which the
//     server verifies;
//   - a larger one is streamed part by part as a multipart upload to a
//     staging key under .mcpblob/tmp/ (over plain HTTP each part is signed
//     with its own SHA-256, which the server checks; over HTTPS parts go as
//     UNSIGNED-PAYLOAD, as minio-go sends them, TLS guarding the bytes);
//     at Commit the staged object is copied server side, in parts of up to
//     512 MiB, into a multipart upload of the real key that carries the final
//     metadata, and the staged object is deleted. This costs the server a
//     second pass over the bytes, but the object appears atomically, with
//     complete metadata, or not at all.
//
// Either way the key changes in one step when the PUT or the final
// CompleteMultipartUpload succeeds: readers never see a partial object, and
// of concurrent writers the last to complete wins. IfNotExists sends
// If-None-Match: * with the PUT, or with the initiation and the completion of
// the final multipart upload; the server's 412 becomes storage.ErrExists.
//
// Abort, a failed Write (size limits, a cancelled Create context) and a
// failed Commit abort the multipart uploads they started and delete the
// staged object. Uploads orphaned by a crashed process are removed by Open
// once they are older than Options.StaleAfter (24 hours by default, so that
// other nodes' uploads in progress are left alone); a bucket lifecycle rule
// that aborts incomplete multipart uploads is a good complement.
//
// # Reading, listing, presigning
//
// Open issues one GET (with a Range header for a range) and returns the
// response body; the object's total size comes from Content-Range. A range
// that starts past the end gives storage.ErrInvalidRange. Stat is a HEAD.
// Delete checks that the object exists first (S3 deletes silently), so it
// is two requests. List uses ListObjectsV2 with StartAfter set to the
// cursor's key and asks for metadata in the listing (a MinIO extension);
// on services that ignore that, it falls back to a HEAD per listed object.
//
// Presigned URLs are computed offline (Options.Region is always set, so
// minio-go never looks up the bucket's location) by a second client that
// shares the credentials and points at Options.PublicEndpoint, the address
// clients use. PresignGet can override the response Content-Type and
// Content-Disposition; PresignPut signs the Content-Type header when one is
// given, so the uploader must send exactly that type.
package s3
