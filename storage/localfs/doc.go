// Package localfs is mcpblob's embedded object store: a folder on the local
// file system (`mcpblob serve --data DIR`), opened with [Open].
//
// # Layout
//
// Every access goes through an [os.Root], so no key or symlink can
// reach outside the folder; on Linux, reads open data files with one
// openat2 call that refuses to leave the folder or follow any symlink
// (RESOLVE_BENEATH, RESOLVE_NO_SYMLINKS), falling back to the os.Root
// where openat2 is missing. Inside it:
//
//	<key>                   the object's bytes, exactly as written
//	.mcpblob/meta/<key>     its metadata (JSON), see below
//	.mcpblob/tmp/           uploads in progress and commit journals
//	.mcpblob/lock           held (flock) by the one process using the folder
//
// Keys map to paths one to one, so the folder reads like the bucket it
// stands for. [storage.ReservedDir] (".mcpblob") is not a valid key. Because
// a path cannot be both a file and a directory, the key "a" and the keys
// "a/..." cannot exist at the same time (the rule of every backend):
// creating one while the other exists fails with a
// [*storage.PathConflictError] naming what is in the way. Key segments are
// at most [storage.MaxSegmentLen] (255) bytes, the name limit of the common
// file systems, by the key rules themselves (before the file system is
// touched); a lower limit met on some file system gives a
// [*storage.KeyError] too (the syscall error is its Err, for logs, never
// its Reason).
//
// # Metadata and atomicity
//
// The data file is a plain file so that Open can hand out the *os.File
// itself (sendfile). Its metadata (size, SHA-256, media type, filename, expiry) sits
// in a sidecar file whose records name the data version they describe by
// (size, modification time in nanoseconds); the modification time is stamped
// on the data file at commit. A data file is visible only while a sidecar
// record matches it, so a reader never pairs one version's bytes with
// another's metadata and never sees a data file without metadata.
//
// A Writer streams into a temporary file under .mcpblob/tmp, hashing as it
// goes (large writes are hashed on a second goroutine while the same bytes
// are copied into the file). On Linux it starts the writeback of every 8 MiB
// written (sync_file_range) and, once the chunk before it is on the disk,
// drops that chunk from the page cache (fadvise DONTNEED): the disk works
// while bytes arrive, the fsync at commit has little left to do, an upload
// holds about two chunks of dirty pages however large it is (so it moves at
// the disk's pace instead of filling memory), and it does not evict the
// blobs being read. Commit, serialised per key within the process:
//
//  1. stamps and fsyncs the temporary file;
//  2. writes a journal (.mcpblob/tmp/<id>.key, holding the key);
//  3. replaces the sidecar, atomically, with [new record, current record];
//  4. renames the temporary file over <key>: the commit point;
//  5. fsyncs the directories it changed and removes the journal.
//
// A crash before step 4 leaves the previous version visible with its own
// record; a crash after it leaves the new one. On the next [Open] the store
// replays the journals (dropping sidecar records that no longer match their
// data file, and sidecars whose data file is gone) and deletes every
// temporary file, so a crashed upload leaves neither bytes nor metadata
// behind. Delete removes the data file first (the commit point) and then the
// sidecar, under the same journal, and prunes directories it left empty.
//
// Writers to one key race freely until Commit; the last Commit wins, and the
// object is always exactly one writer's bytes.
//
// Only one Store may use a folder at a time; a second Open fails with
// [ErrLocked] (advisory flock on Unix; not enforced elsewhere). Files and
// directories are created with modes 0600 and 0700.
//
// # Listing
//
// List walks the tree in key order (a directory sorts as its name plus "/",
// so "a.txt" comes before "a/b" as in S3), starting at the deepest directory
// the prefix names and skipping subtrees that lie wholly before the cursor.
// Cursors are the base64url form of the last key returned. Files that do not
// form a valid key, or have no matching metadata, are not listed.
//
// The first page that reads a directory keeps its entries in memory, sorted
// (the list index), so that later pages find their start by binary search
// instead of reading and sorting the whole directory again: a page of 100
// costs about the same in a folder of 100,000 objects as in a folder of 100.
// The index is rebuilt from the files after every Open, so a crash can never
// leave it disagreeing with them, and this Store's commits and deletes keep
// it up to date (the folder has no other writer while the Store holds it;
// files placed in the folder by hand meanwhile are listed after the next
// Open). It holds at most [Options.ListIndexSize] entries (default
// 1,000,000), each about 32 bytes plus its name (40 bytes measured with
// 8-byte names: 4 MB for 100,000 keys): reading a directory evicts the least
// recently read ones beyond that, and a larger directory is read from the
// disk at every page. Reading a directory into the index holds up commits
// and deletes for as long as the read takes (about 60 ms of CPU for 100,000
// entries, read with getdents64 on Linux).
//
// # Per-read cost
//
// A read opens the data file and checks it against the parsed sidecar,
// which a cache keeps in memory: at most [Options.MetaCacheSize] entries
// (default 65,536, at most 250 bytes each plus the key). A cached sidecar
// is used only when one of its records matches the data file just opened
// (else the sidecar is read again), and every sidecar replacement or removal
// by this Store drops the entry, so the cache never shows a version the
// disk does not describe. Claimed keeps each claim set's folder open (at
// most 64 sets) and remembers a set whose folder does not exist yet until
// Claim creates it; this relies on the Store being the folder's only
// writer.
//
// # Staged writes
//
// A staged write (storage.Stager, staged.go) is one file in
// .mcpblob/staged/, which Open leaves alone (unlike .mcpblob/tmp/): it
// outlives the process that began it. PutStaged cuts the file at the
// part's offset (dropping a torn or unnamed tail), writes the part and
// fsyncs it; parts of one file are written one at a time, and a part
// numbered below one already written is refused (its writer was
// replaced). A part may also be streamed: WriteStaged writes its pieces
// as they arrive, through one open file kept for the part, and SyncStaged
// makes it durable and closes the file. ReadStaged reads staged bytes
// back (a tus upload hashes with it what it did not hash while they
// arrived). CommitStaged cuts the file to the parts' total and publishes
// it with the commit protocol above (sidecar, journal, rename), with the
// caller's SHA-256: the bytes are not copied. A staged write that no
// record names any more (its upload's state was lost) stays until removed
// by hand.
package localfs
