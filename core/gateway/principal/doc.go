// Package principal is the header a gateway sends its upstream to name
// the client it authenticated (Header, "Mcp-Gateway-Principal"), and the
// check an upstream written in Go makes of it.
//
// The value is "v1.<principal>.<expiry>.<mac>": the principal as base64url
// (no padding) of its UTF-8 bytes, the expiry in Unix seconds, and
// base64url(HMAC-SHA256(key, "v1.<principal>.<expiry>")). An upstream
// holding the same key recomputes the MAC over everything before the last
// dot, compares it in constant time, checks the expiry and decodes the
// principal: ten lines in any language (docs/gateway.md has them for
// TypeScript and Python). The value carries no secret; the key never
// leaves the gateway and the upstream.
//
// On a trusted network a gateway may send the principal plain instead
// (Plain); an upstream must then accept the header only from the gateway.
package principal
