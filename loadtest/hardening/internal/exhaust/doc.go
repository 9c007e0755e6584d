// Package exhaust is the "state exhaustion by one principal" class of
// `make hardening`: one principal drives every piece of state a client can
// make a node or its store hold to ten times the node's limits, and each
// [Phase] says how the server answered and how much it kept.
//
// The attacking principal has two API keys: one with blobs:read only, the
// key every phase uses, and one with blobs:read and blobs:write for the
// pending rounds alone (request_upload, the blob application's only tool
// that elicits, needs blobs:write; the state it makes the node hold is
// charged to the principal either way). The phases:
//
//   - sessions: 2025-11-25 initializes, then a ping on each session to
//     count how many the node still holds;
//   - capabilities: initializes with a capabilities object of ~3.7 MiB
//     (the bulk in experimental, or inside elicitation, which the server
//     reads);
//   - subscriptions: resources/subscribe of 8 KiB URIs (of blobs that do
//     not exist) over several sessions, and subscriptions/listen streams
//     whose resourceSubscriptions fill a body of up to ~3.7 MiB;
//   - streams: standalone GET streams (one per session) and
//     subscriptions/listen streams, all held open at once;
//   - pending: 2025-11-25 tools/call request_upload in form mode on
//     sessions that declared elicitation; the elicitation/create request
//     is never answered, so each call waits, held open;
//   - claims: session DELETEs and redemptions of single-use links with
//     Range: bytes=0-0, the claim files counted before and after.
//
// Every answer must be a success or exactly the refusal of a limit on
// protocol state ([wire.JudgeLimit], [wire.JudgeClaims]); what a phase's
// successes made the server keep must stay within the limit (Bound).
// [Bystander] sends a second principal's requests throughout and times them;
// [Storm] is the 2,000-session, 200-stream storm whose figures go into
// bench/RESULTS.md.
//
// Everything is sent to the loopback address the [Target] names.
package exhaust
