// Package sendfile sends local files as HTTP bodies with sendfile(2): it
// finds the *os.File behind a storage reader ([Local]) and wraps it in a
// [Body] that fasthttp hands to the connection's ReadFrom: a small first
// round, so that the headers and the first bytes leave at once, then large
// chunks, renewing the write deadline per round so a stalled client fails
// within the timeout and a long transfer that keeps moving never does,
// with the socket corked so that the kernel sends whole segments. The
// body's last byte goes out uncorked by a send of its own once the socket
// has drained, so that the kernel marks the end of each response
// application-limited and the client's delayed ACK of it does not set the
// pace of the next one.
package sendfile
