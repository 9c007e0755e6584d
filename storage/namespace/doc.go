// Package namespace confines a storage.Backend to one principal's share of
// a store, for `--tenancy principal`: every authenticated principal sees
// only its own blobs.
//
// # Layout
//
// A principal's key K is stored under the raw key
//
//	Prefix + Name(principal) + "/" + K      (".ns/alice/report.pdf")
//
// Keys outside [Prefix] are the shared root namespace (`--tenancy shared`,
// open mode), and admins see the raw store: every namespace and the root.
// [Name] is the principal itself when it is a short, readable segment, else
// "=" and a hash of it, so the segment is always valid and two principals
// never share one. [Split] and [Join] convert between raw keys and
// (namespace, key) pairs, to route change events and admin listings.
//
// # Views
//
// [View] returns the backend seen from inside one namespace. Views are cheap
// (one small allocation, no goroutines) and made per request. A view
// validates the caller's key with storage.ValidateKey before it maps it, and
// refuses a key that the namespace prefix would push over storage.MaxKeyLen
// with a *storage.KeyError that gives the limit in the namespace. Keys of
// other namespaces cannot be named at all: a view answers for them as for
// any missing key.
//
// Everything a view returns speaks in the caller's keys: Info.Key, the Key of
// a *storage.KeyError, the Key and Conflict of a *storage.PathConflictError,
// and the text of every error (the raw prefix, in any encoding a backend or
// its HTTP client uses, is taken out). The backend's error stays in the
// chain, so errors.Is still finds the storage sentinels, context errors and
// the operating system's errors; errors.As finds the rewritten *KeyError or
// *PathConflictError first. An object of the shared root that blocks a whole
// namespace (a root object ".ns" or ".ns/<name>") is reported as a bare
// storage.ErrPathConflict: what is in the way is not the caller's to see.
//
// List takes the caller's prefix and lists the raw one; objects that a view
// cannot address (a key below ".mcpblob" that the root wrote into the
// namespace's folder) are left out.
//
// # Cursors
//
// List cursors pass through unchanged. Both backends of this repository
// (localfs, s3) encode a cursor as the raw key of the last item of the page
// and only ever list keys that start with the prefix they are given; the
// cursor sets where the listing starts, never which keys qualify. A cursor
// made up by a client — the raw key of another namespace, "../", garbage —
// therefore either fails with storage.ErrInvalidCursor (not a valid key) or
// starts the listing somewhere inside or outside the caller's own range,
// showing only the caller's objects or nothing; it cannot reach another
// namespace's objects and tells nothing about them (localfs walks only the
// namespace's folder, S3 lists only the raw prefix). A cursor does carry the
// raw key of the caller's own last item (its namespace name included) in
// base64; that is the caller's own, derived from its own principal.
//
// # Optional interfaces
//
// A view implements storage.Presigner exactly when the backend does;
// presigned URLs name the raw key (a capability the caller got for its own
// object). A view never implements storage.Claimer: claims are cluster
// bookkeeping and stay on the raw store. Close on a view is a no-op: the
// shared backend belongs to whoever opened it.
package namespace
