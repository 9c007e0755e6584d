package gateway

import (
	"bytes"
	"encoding/json"
	"io"
	"mime"
	"net/http"
)

// methodUpdated is the upstream's notice that a resource changed.
const methodUpdated = "notifications/resources/updated"

// maxWatchedLine bounds the start of an SSE line the watch keeps: a
// resources/updated notification is small; a longer line is relayed
// without a look.
const maxWatchedLine = 4 << 10

// watchUpdates returns the body of an upstream answer, for the stream
// cache: an SSE answer (a POST's or the GET stream) is read through a
// watch that drops principal's entry of every URI a
// notifications/resources/updated event names. The bytes pass unchanged.
func (g *Gateway) watchUpdates(principal string, resp *http.Response) io.ReadCloser {
	if g.cache == nil {
		return resp.Body
	}
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if mt != "text/event-stream" {
		return resp.Body
	}
	return &updateWatch{ReadCloser: resp.Body, g: g, principal: principal}
}

// updateWatch scans the lines of an SSE stream as they are read; it holds
// at most maxWatchedLine bytes of the current line.
type updateWatch struct {
	io.ReadCloser
	g         *Gateway
	principal string
	line      []byte
	long      bool // the current line is over maxWatchedLine: ignored
}

func (u *updateWatch) Read(p []byte) (int, error) {
	n, err := u.ReadCloser.Read(p)
	u.scan(p[:n])
	return n, err
}

func (u *updateWatch) scan(p []byte) {
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		part := p
		if i >= 0 {
			part = p[:i]
		}
		if !u.long && len(u.line)+len(part) <= maxWatchedLine {
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
// resources/updated notification invalidates its URI.
func (u *updateWatch) lineDone(line []byte) {
	data, ok := bytes.CutPrefix(line, []byte("data:"))
	if !ok || !bytes.Contains(data, []byte(methodUpdated)) {
		return
	}
	var m struct {
		Method string `json:"method"`
		Params struct {
			URI string `json:"uri"`
		} `json:"params"`
	}
	if json.Unmarshal(data, &m) != nil || m.Method != methodUpdated || m.Params.URI == "" {
		return
	}
	u.g.invalidate(u.principal, m.Params.URI)
}
