// Package bodystream feeds a core/mcp body writer to fasthttp as a
// response body: fasthttp calls its WriteTo, so no goroutine or pipe sits
// between the writer and the connection, every write renews the
// connection's deadline, and the writer runs exactly once, even for a
// response dropped unsent (so its cleanup always happens).
package bodystream
