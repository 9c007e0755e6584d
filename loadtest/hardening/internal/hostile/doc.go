// Package hostile generates the hostile inputs of `make hardening`, class
// by class ([Classes]), each as [Batch]es of [Case]s on one [Surface]:
// path tricks, over-long values, data URIs, JSON and JSON-RPC abuse, HTTP
// framing and headers, Range headers, token forgery, wrong principals,
// multipart abuse, both protocol eras' header rules, active content and
// expiry abuse (ttlSeconds on every upload surface) (the tus class of resumable uploads is package hostiletus, on this
// package's Env and Case).
//
// A Case knows how to send itself through an [Env] (the server's address,
// its API keys and token keys, a seeded random source) and what it must
// get: [WantReject] when success would be a security or contract failure,
// [WantAccept] when the docs say a valid if odd input works, WantEither
// otherwise; a Check adds expectations the verdict cannot express (a
// status, a header, a follow-up request). Every secret an input creates
// (minted tokens, data URI payload markers) is registered with the Env's
// secret sink as it arrives, and every object a success stores with its
// object sink, so the caller can grep the logs and audit the store.
//
// Inputs are deterministic for a seed, bounded in number, and sent only to
// the loopback address the Env names. Expectations cite their source (the
// docs, RFC 9110/9112, the tools' inputSchema): a
// harness that invents rules reports noise.
package hostile
