// Package tenancy decides which part of the shared store a caller sees.
//
// In [Principal] mode (the default whenever authentication is configured)
// each principal has its own namespace (package storage/namespace): its
// keys are unchanged for it and stored under ".ns/<name>/", and nothing
// outside is visible to it. A blobs:admin caller sees the raw store: the
// shared root namespace as is, and every principal's namespace under
// ".ns/<name>/". In [Shared] mode (and on an open loopback endpoint) every
// caller sees the raw store.
//
// The same policy addresses change events: a change in a namespace is
// announced to that namespace's audience in its own keys, and to admins in
// raw keys, so a subscription never sees another namespace's changes.
package tenancy
