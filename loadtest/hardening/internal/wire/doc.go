// Package wire sends one request to the server under test and judges the
// answer. Requests go out byte for byte on a fresh loopback connection
// ([Send]): hand-made heads (malformed framing, oversized headers) and
// requests built with net/http alike, written while the answer is read,
// so a server that answers early and closes is still heard, and a 1xx
// before the final answer is recorded ([Answer.Interim]).
//
// [Rules.Judge] sorts an answer into [Accepted], [Clear] (a rejection
// with the surface's error shape, a non-empty message and no internals),
// [Unclear] and [ServerError]; its doc comment is the definition of a
// clear error that the hardening report uses.
package wire
