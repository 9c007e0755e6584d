// Package framing refuses the requests whose body framing two HTTP parsers
// can read differently: the raw header block of a request (fasthttp's
// RequestHeader.RawHeaders, the bytes as they arrived) is checked before
// the server acts on the request, and a request that fails is answered 400
// and its connection closed, so bytes after it are never taken for another
// request (RFC 9112 §6.1, §6.3, §5.2).
//
// A header block passes when every line ends in CRLF (no bare LF; RFC 9112
// §2.2 lets a recipient accept one, but a front that does not would see
// other header fields), no line is an obs-fold continuation (RFC 9112
// §5.2), and Transfer-Encoding, if present, is one field whose value is
// exactly "chunked" with no Content-Length beside it (RFC 9112 §6.1: a
// server MUST close a connection after a request with both). That is
// stricter than the RFC in two places, on purpose: a tab around the value
// and another spelling of "chunked" (CHUNKED, Chunked) are refused, as no
// client sends them and fronts differ on them.
//
// fasthttp (v1.74.0) frames a request with both fields by Transfer-Encoding
// and keeps the connection open, joins obs-folded lines, accepts bare LF
// line ends and any case of "chunked", and has no option to refuse them;
// it does reject two Transfer-Encoding fields, a coding other than chunked
// or identity, Transfer-Encoding on HTTP/1.0, and a space before the colon.
// Check refuses identity too (RFC 9112 removed it).
//
// Not covered: a bare LF ending the request line itself, which fasthttp
// does not keep; it carries no framing.
package framing
