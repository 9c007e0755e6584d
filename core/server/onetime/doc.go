// Package onetime keeps mcpblob's one-time facts — a single-use link was
// redeemed, an upload id was taken, a 2025-11-25 MCP session is live — in
// the store every node shares, as storage claims ([storage.Claimer]):
// created only if absent (O_EXCL on the local store, If-None-Match: * on
// S3), so of any number of attempts on any number of nodes exactly one
// records a fact, with no component beyond the store. A fact costs no
// memory and cannot be evicted by anyone's volume of links.
//
// Each fact belongs to a set ([Links], [Uploads], [Sessions]) and carries
// the expiry of the token it belongs to plus [Grace]; [Facts.Sweep] removes
// expired facts of every set.
//
// Live sessions are core/mcp/session's [session.LiveSessions]
// ([Facts.LiveSessions]): initialize claims a record of the session,
// DELETE (or an eviction by a node at its bound of sessions) releases it,
// and every request of a 2025-11-25 session asks whether it is still claimed
// ([storage.Claimer.Claimed]: one stat of a file, or one HEAD on S3), so a
// session ended on one node is refused by every other at its next request.
// Ending a session writes nothing, so the records in the store are those
// of sessions neither ended nor expired. A record is named by a digest of
// the session id ([SessionName]), never the id, which is a credential;
// the names of the ids seen last are kept (a bounded cache of a function of
// the id: the record itself is asked every time), so a session's requests
// do not hash its id each time.
//
// A backend without claims (a third-party storage.Backend given through the
// Go API) gets [storage.MemClaims]: exact on one node only, which [New]
// logs as a warning; sessions are then left to core/mcp's per-node table
// and revocations.
package onetime
