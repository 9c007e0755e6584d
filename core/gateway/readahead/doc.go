// Package readahead reads an upstream answer's body ahead of its relay,
// on a goroutine of its own through two pooled buffers, so that the
// gateway can wait for the next read with a time limit (a keep-alive to the
// client while the upstream is silent) and can tell whether a first read
// is the whole answer (headers and body in one write). A body the
// transport holds whole already is read on the caller's goroutine, with no
// reader goroutine.
package readahead
