// Package contents writes the streamed contents of a resources/read
// result (docs/design.md): a [Body] is the result's JSON around
// contents read from a reader, encoded as they go out, as base64 (SIMD,
// package codec) or as JSON-escaped text, with its exact length known
// before the first byte (Content-Length, or one SSE data line). [ScanText]
// is the first pass that makes a text body's escaped length known.
//
// Memory is bounded per stream and per process, whatever the object size
// and however many streams run: base64 streams share [MemoryBudget]. Each
// stream's fair share is the budget divided by the streams encoding at
// once; a plan sized from it (budget.go) fixes its buffers (pooled
// power-of-two base64 buffers of 4 KiB to 1 MiB, raw chunks 3/4 of that,
// held only while a chunk is read and encoded) and its mapped window, and
// is reserved from the budget before use, halved until it fits. Inline
// streams reserve per chunk and release after its write, so they shrink as
// streams join, and buffers held by streams stalled on slow sockets count
// against the rest: the total stays within the budget, plus at most the
// smallest plan (7 KiB) per stream once the budget is spent.
//
// Speed (source.go, base64.go). A local file (an *os.File, possibly behind
// Unwrap() io.ReadCloser wrappers) of 2 MiB or more is encoded straight from
// mapped windows of up to 3 MiB, with no copy into a buffer; a file that
// shrinks under its mapping faults, and the fault becomes [ErrFileChanged]
// rather than a crash (debug.SetPanicOnFault). Streams encode inline in
// chunks of at most 256 KiB of base64, which stay in L2 between the encode
// and the write. A body of 8 MiB or more in a stream running nearly alone
// (at most GOMAXPROCS/2 streams) asks its writer, when that has a
// SetWriteBuffer method (a socket), for a 4 MiB send buffer, and is encoded
// ahead on a second goroutine, two 1 MiB buffers deep, so encoding overlaps
// the write(2) of the previous chunk (budget.go has the measurements, and
// the cost when the machine is busy).
//
// It imports the standard library, core/codec and core/mcp/scan (for JSON
// escaping) only. Package mcp imports it (it builds a Body in
// resources/read and writes it), never the reverse.
package contents
