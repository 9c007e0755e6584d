package wire

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

// ErrOverBounds: a read went past its budget (the gateway's
// MaxRewriteBytes for an answer it reads to change).
var ErrOverBounds = errors.New("gateway: upstream answer over the gateway's bound")

// ReadEvent reads one SSE event (its lines up to and including the blank
// line that ends it) from br, taking its bytes from *budget. data is its
// data lines joined by "\n" (nil when it has none). Lines end in "\n" or
// "\r\n". At the end of the stream it returns io.EOF, or
// io.ErrUnexpectedEOF for an event cut off.
func ReadEvent(br *bufio.Reader, budget *int64) (raw, data []byte, err error) {
	for {
		start := len(raw)
		raw, err = appendLine(raw, br, budget)
		if err != nil {
			switch {
			case errors.Is(err, io.EOF) && len(raw) > 0:
				return raw, data, io.ErrUnexpectedEOF
			case errors.Is(err, io.EOF):
				return nil, data, err
			}
			return raw[:start], data, err // the line cut off is left out
		}
		line := raw[start:]
		content := bytes.TrimSuffix(bytes.TrimSuffix(line, []byte("\n")), []byte("\r"))
		if len(content) == 0 {
			return raw, data, nil
		}
		if v, ok := bytes.CutPrefix(content, []byte("data:")); ok {
			v = bytes.TrimPrefix(v, []byte(" "))
			if data != nil {
				data = append(data, '\n')
			}
			data = append(data, v...)
		}
	}
}

// appendLine appends one line with its end from br to raw, within
// *budget; at the end of the stream, what there was and io.EOF.
func appendLine(raw []byte, br *bufio.Reader, budget *int64) ([]byte, error) {
	for {
		part, err := br.ReadSlice('\n')
		*budget -= int64(len(part))
		if *budget < 0 {
			return raw, ErrOverBounds
		}
		raw = append(raw, part...)
		switch {
		case err == nil:
			return raw, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		default:
			return raw, err
		}
	}
}

// ReplaceData returns the event raw with its data lines replaced by one
// data line holding data; its other lines (id, event, retry, comments)
// stay as they were.
func ReplaceData(raw, data []byte) []byte {
	var out []byte
	wrote := false
	for len(raw) > 0 {
		i := bytes.IndexByte(raw, '\n')
		line := raw
		if i >= 0 {
			line = raw[:i+1]
		}
		raw = raw[len(line):]
		content := bytes.TrimRight(line, "\r\n")
		switch {
		case bytes.HasPrefix(content, []byte("data:")) && !wrote:
			out = append(append(append(out, "data: "...), data...), '\n')
			wrote = true
		case bytes.HasPrefix(content, []byte("data:")):
		case len(content) == 0:
			out = append(out, '\n')
		default:
			out = append(out, line...)
		}
	}
	return out
}

// AppendTail keeps the last 4 bytes of tail followed by p.
func AppendTail(tail, p []byte) []byte {
	if len(p) >= 4 {
		return append(tail[:0], p[len(p)-4:]...)
	}
	tail = append(tail, p...)
	return tail[max(len(tail)-4, 0):]
}

// BetweenEvents reports whether a stream whose last bytes are tail stands
// between two events (at its start, or after a blank line).
func BetweenEvents(tail []byte) bool {
	return len(tail) == 0 || bytes.HasSuffix(tail, []byte("\n\n")) || bytes.HasSuffix(tail, []byte("\r\r"))
}
