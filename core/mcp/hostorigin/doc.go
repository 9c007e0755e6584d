// Package hostorigin is the DNS-rebinding rule that both of core/mcp's
// transports apply to every request before reading its body (mcpblob's
// fasthttp front through core/server/gate, and core/mcp/mcphttp on
// net/http): a [Policy] decides from the Host and Origin header values
// alone whether a request is served.
//
// A page on another site that rebinds its own name to the server's address
// sends that name as Host, and its own origin as Origin; a server that
// accepts only the names it is known by, and only origins it trusts, does
// not answer it. The rule is strict about form: a Host that is not
// "name[:port]" or "[IPv6][:port]", and an Origin that is not
// "scheme://host[:port]" with scheme http or https, are refused, and names
// are compared as written (case aside), so "localhost." is not "localhost".
//
// The package imports only the standard library.
package hostorigin
