// Package h1 is the gateway's HTTP/1.1 client toward its upstream: an
// [http.RoundTripper] over a pool of kept-alive connections, each read and
// written by the calling goroutine (net/http's Transport spends two
// goroutines per connection and a channel exchange per request, a fifth of
// the gateway's CPU on small requests).
//
// A request's headers and a body held in memory go out in one write; on a
// plain socket the wait for the answer is joined to that write (one round
// of Go's poller, its readiness reset before the write), so the answer is
// read once it is there rather than after a read that finds the socket
// empty (one system call fewer per request); its answer is read with a raw
// system call (the socket is non-blocking), which unlike net.Conn's read
// does not wake the runtime's monitor thread after the idle wait for the
// upstream (peeker.read says why that costs). A streamed body (chunked when its length is unknown, each chunk flushed)
// is written by a goroutine of its own, so that an upstream that answers
// before it has read the whole body (413) is heard. The answer's body
// streams as the caller reads it, with flat memory; the connection goes
// back to the pool when the body was read to its end (and the request
// body was sent whole), and is closed when the caller closes the body
// before its end; its InBuffer reports, before the first read, whether
// the whole body came with the headers (a caller may then read it without
// a goroutine to time the wait). The request's context ending closes the connection (a context that
// cannot end, such as context.Background, is not watched): a
// call in flight returns the context's error. Bounds: the dial
// (Options.DialTimeout), the wait for the response headers
// (Options.HeaderTimeout, a timeout error; a read deadline a kept-alive
// connection keeps from one request to the next while it is far enough,
// so a wait may run up to an eighth longer, at most a second) and their size
// (Options.MaxHeaderBytes; the error says "response headers exceeded").
// The response head is read by h1 itself, as net/http reads it but with
// fewer allocations (one string for the head, the header map sized once);
// a head it does not read plainly (a folded header line, a control
// character in a value) is an error.
// Redirects are returned, never followed; nothing is compressed or
// decompressed; no proxy.
//
// An idle connection the upstream closed is found before it is reused (a
// non-blocking peek at the socket each time it is taken again), and a
// request whose body can be sent
// again (none, or GetBody) is retried once on a fresh connection when a
// reused one fails before any byte of an answer, if it did not go out
// whole or its method is idempotent (net/http's rule: a POST the upstream
// may have acted on is not sent twice).
package h1
