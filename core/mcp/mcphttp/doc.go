// Package mcphttp serves an [mcp.Server] on net/http: [NewHandler] returns
// the http.Handler of the Streamable HTTP transport (both protocol eras,
// JSON and SSE answers, the GET stream, DELETE), with the guarantees
// mcpblob's own fasthttp front gives:
//
//   - DNS-rebinding protection (package core/mcp/hostorigin): the Host
//     header must be one of Options.AllowedHosts (default: localhost,
//     127.0.0.1, [::1] — serve on a loopback address, or list the names
//     clients use), and an Origin header, when present, must be in
//     Options.AllowedOrigins, a localhost origin under the default hosts,
//     or the request's own origin. A refused request gets 403 with a
//     JSON-RPC error body;
//   - body limits: a declared Content-Length over Options.MaxRequestBytes
//     (default [mcp.Server.MaxRequestBytes]) gets 413 before a byte is
//     read, a longer body of unknown length is cut there (413); the
//     server's MaxBodyBytes and x-mcp-file limits apply as the body is
//     scanned;
//   - slow bodies: a body is read under a minimum average rate
//     (Options.BodyMinRate after Options.BodyGrace, banked up to
//     Options.BodyReadTimeout), each read's deadline set with
//     http.ResponseController; a body that falls behind is cut (408);
//   - responses: each write (and each SSE event, flushed as it is
//     written) must reach the client within Options.WriteTimeout;
//   - sendfile: a resources/stream body that is a file ([resstream.BodyFile])
//     is handed, as an *io.LimitedReader over the *os.File, to the
//     ResponseWriter's ReadFrom, where net/http uses sendfile(2) on
//     plain TCP connections (HTTP/1.1 without TLS).
//
// Authentication is the embedder's: Options.Authenticate returns the
// caller's principal and scopes, which the server's Authorize hook and
// handlers (mcp.Call.Principal, Scopes) see; without it the endpoint is
// open.
//
// Serve the handler with an http.Server whose ReadHeaderTimeout is set and
// whose ReadTimeout and WriteTimeout are zero: the handler paces bodies
// and writes itself, and a whole-request timeout would cut a large upload
// or a long SSE stream that is progressing.
//
// The package imports core/mcp, three packages under it (bodyrate and
// hostorigin, the rules it shares with mcpblob's fasthttp front, and
// resstream) and the standard library, so a program serving its own tools
// this way builds none of mcpblob's blob service (storage, core/server,
// core/blobs).
package mcphttp
