package main

import (
	"bytes"
	"io"
	"os"
	"regexp"
	"strings"

	"github.com/mcpblob/mcpblob/bench/hardening/internal/wire"
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
		start := bytes.LastIndexByte(segment[:m[0]], '\n') + 1
		if start == last {
			continue // one entry per line
		}
		last = start
		end := bytes.IndexByte(segment[m[0]:], '\n')
		if end < 0 {
			end = len(segment)
		} else {
			end += m[0]
		}
		out = append(out, wire.Clip(strings.TrimSpace(string(segment[start:end])), 200))
		if len(out) == 5 {
			break
		}
	}
	return out
}
