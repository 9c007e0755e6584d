// Package ingest is mcpblob's one path from an upload's bytes to a stored
// object, shared by every upload surface (the control API's PUT, the /u
// upload endpoints, the MCP upload_file and request_upload tools):
//
//	Begin   checks the options and the declared media type against Accept
//	        (together with the filename's extension: accept.go), then
//	        creates the storage.Writer (nothing is read yet)
//	Write   counts bytes against MaxSize (and Size) as they arrive, keeps
//	        the first 512 for sniffing, and hands 1 MiB chunks to storage on
//	        another goroutine, so decoding or parsing the next bytes overlaps
//	        storage's hashing and writing of the last ones
//	Close   flushes, waits for storage, then checks the content: not empty,
//	        not contradicting the declared type where sniffing is reliable
//	        (magic numbers), sniffed type inside Accept, and, for a file
//	        admitted by its extension alone, no markup the list does not name
//	Commit  makes the object visible; Abort discards it
//
// [Store] runs the whole sequence on an io.Reader and aborts on any failure.
//
// [CheckDeclared] is Begin's checks alone, for a surface that takes the
// bytes later.
//
// [BeginStaged] and [CommitStaged] are the same checks for bytes that
// arrive over many requests into a staged write (storage.Stager, as
// resumable uploads write them): Begin's before the staged write starts,
// Write's size limits and Close's content checks (from the kept first
// bytes) before it is committed, which copies nothing.
//
// Invariants: nothing is visible under the key unless Commit succeeded;
// every failure before Commit leaves the store as it was once Abort is
// called (Abort is always safe, also after Commit); memory per upload is at
// most three 1 MiB chunks (pooled), whatever the object size.
//
// Errors: the problems a client caused are [*Error] values wrapping one of
// the sentinels [ErrTooLarge], [ErrEmpty], [ErrTypeMismatch] or
// [ErrNotAccepted], with a user-facing Detail phrase; storage.ErrExists,
// storage.ErrInvalidKey, storage.ErrTooLarge and storage.ErrSizeMismatch from
// the backend pass through wrapped. Callers test with errors.Is and
// errors.As; anything else is a server fault (or, from Store, a failure of
// the source reader). Each surface maps these to its protocol in one place.
//
// The sniffing rules ([Sniff], [ContentProblem]) list only formats with
// unambiguous magic numbers: for them a declared type that the content
// contradicts is a lie; for every other type the declared type is
// advisory (docs/protocol.md, "File inputs").
//
// [SniffedUpload] is the same path begun at the first Write, its media type
// sniffed from that Write's bytes when none was given: for writers that
// learn the type after the bytes, such as the gateway's offloaded blobs.
package ingest
