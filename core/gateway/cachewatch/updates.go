package cachewatch

import (
	"bytes"
	"encoding/json"
	"io"
)

// MethodUpdated is the upstream's notice that a resource changed.
const MethodUpdated = "notifications/resources/updated"

// MaxWatchedLine bounds the start of an SSE line WatchUpdates keeps: a
// resources/updated notification is small; a longer line is relayed
// without a look.
const MaxWatchedLine = 4 << 10

// WatchUpdates returns body (an SSE stream), read through a watch that
// calls updated with the URI of every notifications/resources/updated
// event in it, as it is read.
func WatchUpdates(body io.ReadCloser, updated func(uri string)) io.ReadCloser {
	return &updateWatch{ReadCloser: body, updated: updated}
}

// updateWatch scans the lines of an SSE stream as they are read; it holds
// at most MaxWatchedLine bytes of the current line.
type updateWatch struct {
	io.ReadCloser
	updated func(uri string)
	line    []byte
	long    bool // the current line is over MaxWatchedLine: ignored
}

func (u *updateWatch) Read(p []byte) (int, error) {
	n, err := u.ReadCloser.Read(p)
	u.scan(p[:n])
	return n, err
}

func (u *updateWatch) scan(p []byte) {
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i >= 0 && len(u.line) == 0 && !u.long { // a whole line in p: looked at where it is
			if i <= MaxWatchedLine {
				u.lineDone(bytes.TrimSuffix(p[:i], []byte("\r")))
			}
			p = p[i+1:]
			continue
		}
		part := p
		if i >= 0 {
			part = p[:i]
		}
		if !u.long && len(u.line)+len(part) <= MaxWatchedLine {
			u.line = append(u.line, part...)
		} else {
			u.long, u.line = true, u.line[:0]
		}
		if i < 0 {
			return
		}
		if !u.long {
			u.lineDone(bytes.TrimSuffix(u.line, []byte("\r")))
		}
		u.line, u.long = u.line[:0], false
		p = p[i+1:]
	}
}

// lineDone looks at one whole line: a data line holding a
// resources/updated notification reports its URI.
func (u *updateWatch) lineDone(line []byte) {
	data, ok := bytes.CutPrefix(line, []byte("data:"))
	if !ok || !bytes.Contains(data, []byte(MethodUpdated)) {
		return
	}
	var m struct {
		Method string `json:"method"`
		Params struct {
			URI string `json:"uri"`
		} `json:"params"`
	}
	if json.Unmarshal(data, &m) != nil || m.Method != MethodUpdated || m.Params.URI == "" {
		return
	}
	u.updated(m.Params.URI)
}
