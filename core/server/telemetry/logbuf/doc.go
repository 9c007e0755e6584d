// Package logbuf batches log lines into few writes. The access log writes
// one line per request; on the small-request load (docs/design.md, P6) one
// write(2) per line was a measurable share of the server's CPU per request.
// A Writer keeps whole lines in a bounded buffer and writes them out when
// the buffer would overflow, when a short interval has passed since the
// first line buffered, on Flush (clean shutdown), and, through Handler,
// right after any record at warn level or above, so errors are never
// delayed.
//
// TextHandler formats what slog's text handler formats, byte for byte,
// but writes the records of plain values (the access line) without slog's
// generic machinery, in half its CPU time.
//
// What a crash (not a clean shutdown) can lose is the last interval's
// info lines; every line is written whole, never split across writes
// unless it alone exceeds the buffer.
package logbuf
