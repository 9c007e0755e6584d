package main

import (
	"bytes"
	"io"
	"os"
	"regexp"
	"strings"

	"github.com/mcpblob/mcpblob/loadtest/hardening/internal/wire"
)

// logTail reads the server's log file in consecutive segments, so each
// batch of inputs is charged with exactly the lines written while it ran.
type logTail struct {
	path string
	off  int64
}

// next returns the bytes written since the last call.
func (l *logTail) next() []byte {
	f, err := os.Open(l.path)
	if err != nil {
		return nil
	}
	defer f.Close()
	if _, err := f.Seek(l.off, io.SeekStart); err != nil {
		return nil
	}
	b, _ := io.ReadAll(f)
	l.off += int64(len(b))
	return b
}

// panicLine matches what a crash or a recovered panic leaves in a log: the
// word "panic" anywhere (no generated input contains it), a "fatal error:"
// line or a goroutine trace header.
var panicLine = regexp.MustCompile(`(?mi)panic|^fatal error: |^goroutine \d+ \[`)

// panics returns the lines of segment that report a panic or crash.
func panics(segment []byte) []string {
	var out []string
	last := -1
	for _, m := range panicLine.FindAllIndex(segment, -1) {
		start, end := lineAt(segment, m[0])
		if start == last {
			continue // one entry per line
		}
		last = start
		out = append(out, wire.Clip(strings.TrimSpace(string(segment[start:end])), 200))
		if len(out) == 5 {
			break
		}
	}
	return out
}

// lineAt returns the bounds of the line of text that holds offset i
// (without its newline).
func lineAt(text []byte, i int) (start, end int) {
	start = bytes.LastIndexByte(text[:i], '\n') + 1
	if end = bytes.IndexByte(text[i:], '\n'); end < 0 {
		return start, len(text)
	}
	return start, i + end
}
