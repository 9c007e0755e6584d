// Package bodystream feeds a core/mcp body writer to fasthttp as a
// response body: fasthttp calls its WriteTo, so no goroutine or pipe sits
// between the writer and the connection, every write that may reach the
// connection (not one held in fasthttp's write buffer) renews the
// connection's deadline, and the writer runs exactly once, even for a
// response dropped unsent (so its cleanup always happens). The writer it
// hands out also offers SetWriteBuffer (SO_SNDBUF on the connection), which
// a body writer streaming a large body alone uses to queue more ahead.
//
// Count wraps any such body (a Stream, a sendfile.Body) so that the bytes
// it handed the connection are known when fasthttp closes it, which is when
// the access log writes the request's line (telemetry.EndRequest).
package bodystream
