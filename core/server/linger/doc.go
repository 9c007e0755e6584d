// Package linger closes the server's side of a connection without losing
// the answer just written on it. A server that closes a connection while
// request bytes are still arriving (an upload refused before its body was
// read) makes the kernel answer them with a reset, and a client that is
// still writing sees "connection reset" instead of the refusal: net/http's
// client returns the write error, not the response. Close sends FIN first,
// then reads and discards what the client still sends, within bounds of
// time and bytes, before it closes, as nginx's lingering close and
// net/http's server do.
//
// A connection another goroutine is still reading (an idle keep-alive one
// closed at shutdown) must be closed at once: the close is what wakes that
// reader.
package linger
