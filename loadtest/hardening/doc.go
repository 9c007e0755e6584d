// Command hardening is `make hardening` (docs/hardening.md): a bounded,
// loopback-only run that drives every surface of mcpblob with generated
// hostile inputs and reports, as a markdown table, how each surface
// answered and whether the server stayed whole.
//
// It builds mcpblob from the working tree and starts it on a free
// 127.0.0.1 port with a local store in a temp folder, known API keys
// (alice; bob as the wrong principal; mallory, the state exhaustion
// class's one principal, with a blobs:read key and a blobs:write one), a
// known token key,
// --log-level debug and --max-upload 256 MiB, appending everything it
// logs to a file. With -s3 (the full profile, when .tools/bin/weed exists)
// a second mcpblob on a fresh single-node SeaweedFS gets the same inputs
// (no storms).
//
// The inputs (package internal/hostile) come in classes: path tricks
// (../, %2e%2e, //, backslash, NUL, overlong UTF-8, unicode look-alikes,
// .MCPBLOB and .mcpblob/claims), over-long keys, ids, strings, filenames
// and numbers, data URIs (base64 whitespace and padding errors, other
// schemes), JSON and JSON-RPC (duplicate keys, nesting 10,000 and 100,000
// deep, batches, wrong types), HTTP framing and headers (Content-Length
// -1, smuggling shapes, huge and many headers, Host and Origin, Expect:
// 100-continue without credentials, a request pipelined after an early
// refusal), HTTP smuggling on every route (Transfer-Encoding with
// Content-Length, obs-folded, tab, upper case, bare LF, each followed by
// a smuggled GET /healthz on the same connection: 400, the connection
// closed, nothing more answered), Range headers, token forgery and tampering on /d, /u, /upload
// and session ids (including tokens validly signed with hostile claims),
// the wrong principal, multipart abuse, both protocol eras' header rules
// (Mcp-Method, Mcp-Name, Mcp-Param-*) and active content (stored HTML,
// SVG, XHTML, XML, JavaScript served through /v1, /d and resources/stream),
// and tus on /v1/tus/ (hostile creations, concatenations, PATCHes and ids,
// each with its documented status; a refused PATCH must leave HEAD's
// offset unchanged, and every completed upload's blob its exact bytes),
// and expiry abuse (ttlSeconds of 0, negative, huge, not a number on PUT,
// POST /v1/uploads, tus metadata and the upload tools: refused naming
// ttlSeconds, nothing stored).
// Each class is sent surface by surface, a few inputs at a time.
//
// After each batch (one class on one surface) it checks that the process
// is alive and logged no panic, that a normal request still works, that
// the store holds exactly the baseline objects (bytes compared by sha256)
// and the objects success answers named, nothing else, and that the log
// lines written meanwhile hold no secret: an API key, the token key, the
// signature (or sealed box) of any token the server minted, a presigned
// URL's signature or query, or a data URI payload marker the harness sent.
// A crashed server is restarted so the rest still runs.
//
// After the local pass (storms and state classes below included), the
// quota abuse class (quota.go) runs on a fresh server with
// --quota-bytes 1 MiB: alice's PUTs (declared and chunked) and tus uploads
// racing at the limit, a tus PATCH past its Upload-Length, a PUT that
// declares 900 KiB and hangs up after 10 bytes; every answer a 201/204 or
// a clear refusal, and afterwards GET /v1/usage at most the quota, equal
// to the listed sizes, nothing left in flight.
//
// Then two storms, while the server's RSS is sampled every 50 ms and GET
// /healthz is timed every 100 ms (throughout the whole run, from a process
// of its own: package internal/prober): a slow-body
// storm (2,000 connections in the full profile, 200 in the smoke one, half
// trickling a data URI into a 2026-07-28 tools/call upload_file and half a
// multipart body into /u endpoints, one byte per connection every few
// seconds, 64 MiB announced) and a connection storm (idle connections,
// headers that never end, kept-alive ones) with normal requests alongside.
// At the end every object is read back and compared with its listing.
//
// Then the state exhaustion class (package internal/exhaust),
// each phase on a fresh server of its own: one principal drives sessions,
// capabilities, subscriptions of both eras, listen and GET streams,
// pending elicitation rounds and claims to ten times the node's limits
// (the defaults in the full profile; scaled-down limits given as flags in
// the smoke one; no claims rate but in the claims phase), while a second
// principal's requests must keep succeeding. Every answer must
// be a success or exactly the limit's refusal, what the node keeps must
// stay within each limit (sessions read from its admin /metrics, claims
// counted in its store), and its RSS under -exhaust-rss. In the full
// profile the state storm follows on another fresh server: 2,000 sessions
// and 200 streams from one principal, the second principal's p99 under
// -max-p99; -results writes its figures into bench/RESULTS.md.
//
// Then the gateway passes (`serve --upstream`, docs/gateway.md). First
// the hostile client classes through a gateway in front of mcpblob (its
// credential there is alice's key, so every principal is alice upstream
// and the wrong principal class is left out): the batches of /mcp in both
// eras and of resources/stream, with the after-batch checks above on the
// gateway's process and log and on the upstream's store (Options.APIAddr
// sends the control API there); a resources/stream the gateway answers
// with its own downloadUrl for a URI that must be refused passes when that
// URL's GET is refused clearly. Then a gateway in front of a hostile
// upstream of the harness's own (internal/badupstream; --upstream-timeout
// 2 s): one normal call through it per behaviour (endless headers, an
// endless SSE line, huge, invalid and wrong-id JSON, a body that ends
// early or claims 2 GiB, drips, silence, a redirect, text/plain, HTML,
// 500, 401, an SSH banner, a closed connection; on the gateway's /g/
// downloadUrls: a good blob checked byte by byte, a blob not base64, cut,
// not a blob, an upstream error, invalid JSON, HTML, endless headers,
// silence, 2 GiB claimed). Each must get what the behaviour names: relayed
// as the upstream sent it (200), refused with 502 or 504 (404 for the
// upstream's not-found) and a JSON-RPC error naming the upstream problem
// (data.upstream) or a JSON error on /g/, or cut (never a whole-looking
// body), within 10 s past the upstream timeout for those that end there
// and 60 s for the rest; the gateway's RSS within 64 MiB of its size after
// start-up, its log free of panics and secrets (its upstream token and
// principal key included), no client key seen by the upstream, no
// redirect followed.
//
// The table has one row per target and surface (and storm): inputs tried,
// rejected with a clear error, accepted, wrong answers (a success that
// must be a refusal, a refusal of a valid input, or a broken extra
// expectation), 5xx or internal errors, unclear errors (including no
// answer), crashes (exits, panics, a server that stopped serving), lost or
// half-written objects, secrets found in the logs, peak RSS and the
// slowest /healthz. What "clear" means is defined in [wire.Rules.Judge];
// what each input must get, in internal/hostile. Every finding is listed
// below the table.
//
// The exit status is 1 on any finding: a crash, a lost or half-written
// object, a secret in the logs, peak RSS at or over -max-rss during a
// storm, a /healthz answer at or over -max-healthz (or none), a 5xx, an
// unclear error or a wrong answer, a broken limit or an RSS or p99 over
// its bound in the state passes; 2 when the run itself could not be done.
//
//	cd loadtest && go run ./hardening                          # full: ≤ ~6 min on 2 cores
//	cd loadtest && go run ./hardening -profile smoke           # ≤ ~65 s (make test)
//	cd loadtest && go run ./hardening -profile smoke -only gateway   # the gateway passes
//	cd loadtest && go run ./hardening -out /tmp/hardening.md -keep
//	cd loadtest && go run ./hardening -results ../bench/RESULTS.md   # also record the state storm
//	cd loadtest && go run ./hardening -profile smoke -only "smuggling,state exhaustion"
//
// It never leaves 127.0.0.1, stops by itself (-budget bounds the run after
// the build), and stops every process it started by its PID (Pdeathsig
// kills them if it dies).
package main
