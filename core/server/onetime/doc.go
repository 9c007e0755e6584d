// Package onetime keeps mcpblob's one-time facts — a single-use link was
// redeemed, an upload id was taken — in the store every node shares, as
// storage claims ([storage.Claimer]): created only if absent (O_EXCL on the
// local store, If-None-Match: * on S3), so of any number of attempts on any
// number of nodes exactly one records a fact, with no component beyond the
// store. A fact costs no memory and cannot be evicted by anyone's volume of
// links.
//
// Each fact belongs to a set ([Links], [Uploads]) and carries the expiry of
// the token it belongs to plus [Grace]; [Facts.Sweep] removes expired facts
// of every set. A backend without claims (a third-party storage.Backend
// given through the Go API) gets [storage.MemClaims]: exact on one node
// only, which [New] logs as a warning.
package onetime
