// Package server is mcpblob's HTTP front: the only package that imports
// fasthttp. It serves the MCP endpoint (/mcp, POST/GET/DELETE, both protocol
// eras, implemented transport-agnostically by core/mcp, whose ended
// 2025-11-25 sessions it records in the shared store through package onetime)
// and the operations endpoints /healthz and /readyz, and owns everything
// HTTP-shaped around them: DNS-rebinding protection (Host and Origin checked
// before any body is parsed), bearer API keys, request size and header
// limits, requests whose body framing another parser could read differently
// (Transfer-Encoding with Content-Length, obs-fold, bare LF: package
// framing) answered 400 with the connection closed, timeouts with per-chunk write deadlines (so multi-gigabyte
// responses and long SSE streams survive while slow readers do not hold
// connections forever), limits against slow and many clients (limits.go:
// connection caps, upload slots in all and per principal, a minimum rate for
// request bodies, buffers taken when bytes arrive), log redaction
// (redact.go), metrics (observe.go: /metrics on an open loopback node,
// behind the same Host and Origin check; the admin listener, package
// admin, elsewhere), and graceful shutdown (readiness off, drain delay,
// then a bounded grace period).
//
// Large responses stream: core/mcp hands over a writer and, for JSON, the
// exact length, and the adapter gives fasthttp a body stream that implements
// [fasthttp.BodyWriterTo], so bytes go from storage to the socket without a
// pipe or an extra copy; SSE events are flushed one by one.
//
// The byte plane (docs/byte-plane.md) is here too: sealed download links
// GET|HEAD /d/{token} (download.go) with single ranges, validators and
// single-use redemption recorded as a storage claim (package onetime),
// each claim of the byte plane charged first to its token's principal
// against core/mcp's claims rate (claimrate.go: 429 beyond); the control
// API /v1 (control.go,
// docs/control-api.md) with streaming PUTs; and the sendfile path
// (byteplane_body.go): local files go to fasthttp as a BodyWriterTo that
// hands bufio.Writer.ReadFrom an *io.LimitedReader over the *os.File, so
// (*net.TCPConn).ReadFrom uses sendfile(2), in rounds that renew the write
// deadline. Storage errors become HTTP statuses in one place
// (apiStorageError).
//
// Uploads (upload.go, uploadpage.go): POST|PUT /u/{token} streams
// multipart/form-data (mime/multipart over the body stream, never
// pre-parsed) or a raw body into storage through storage/ingest (as PUT
// /v1/blobs does), with the token's maxSize, accept and content sniffing
// enforced as bytes arrive and nothing visible until the whole body
// arrived; reuse is refused through IfNotExists on a key
// derived from the token. GET /upload/{token} serves the URL-mode upload
// page (embedded HTML under a per-response CSP nonce).
package server
