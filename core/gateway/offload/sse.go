package offload

import (
	"bufio"
	"bytes"
	"errors"
	"io"

	"github.com/mcpblob/mcpblob/core/gateway/blobdecode"
)

// maxHeldFieldLines bounds the SSE field lines (id:, event:, retry:) met
// between the data lines of an event being rewritten: they are sent after
// the event's data.
const maxHeldFieldLines = 16 << 10

// Flusher is what an SSE answer is written to: Flush pushes what is
// buffered to the client.
type Flusher interface {
	io.Writer
	Flush() error
}

// SSE rewrites one SSE answer (see Relay).
type SSE struct {
	W Flusher
	// Max bounds the rewritten bytes of an event held before any is sent
	// (the gateway's MaxRewriteBytes).
	Max int
	// Relayed counts n bytes sent to W.
	Relayed func(n int64)
	// BrokeOff is called when the upstream's body fails outside an event
	// being rewritten; its error ends the relay.
	BrokeOff func() error
	// Failed is called once for a rewrite that failed (f as Classify names
	// it, never nil), spilled when some of its event was already sent. It
	// returns the error event answering the request, sent in the event's
	// place when !spilled.
	Failed func(f *Failure, err error, spilled bool) []byte
}

// Relay relays the SSE answer body line by line as it arrives. The data of
// an event that is a JSON object (its first data line starts with "{") goes
// through blobdecode.Rewrite with opts, its output held up to Max; every
// other line passes byte for byte. A rewrite that fails while its event is
// held is answered with Failed's error event, and the stream ends; past
// the bound, the error cuts the stream. A failed rewrite leaves none of
// the answer's blobs stored.
func (s *SSE) Relay(body io.Reader, opts blobdecode.RewriteOptions, stored *Stored) error {
	br := bufio.NewReaderSize(body, 64<<10)
	for {
		p, err := peekLineStart(br, len("data: {"))
		switch {
		case len(p) == 0 && errors.Is(err, io.EOF):
			return s.W.Flush()
		case bytes.HasPrefix(p, []byte("data: {")), bytes.HasPrefix(p, []byte("data:{")):
			if stop, err := s.rewriteEvent(br, opts, stored); stop || err != nil {
				return err
			}
			continue
		}
		if err := s.copyLine(br); err != nil {
			return err
		}
	}
}

// copyLine copies one line, flushing when nothing more has arrived.
func (s *SSE) copyLine(br *bufio.Reader) error {
	for {
		chunk, err := br.ReadSlice('\n')
		if _, werr := s.W.Write(chunk); werr != nil {
			return werr
		}
		s.Relayed(int64(len(chunk)))
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF):
			return s.W.Flush()
		case err != nil:
			return s.BrokeOff()
		}
		if br.Buffered() == 0 {
			return s.W.Flush()
		}
		return nil
	}
}

// rewriteEvent rewrites the data of the event starting at br. stop means
// the stream ends here (an error event was sent).
func (s *SSE) rewriteEvent(br *bufio.Reader, opts blobdecode.RewriteOptions, stored *Stored) (stop bool, err error) {
	out := &heldOutput{w: s.W, max: s.Max, relayed: s.Relayed}
	out.buf = append(out.buf, "data: "...)
	ev := &eventData{br: br}
	ev.startLine()
	_, err = blobdecode.Rewrite(ev, dataLines{out}, opts)
	if err == nil {
		out.buf = append(out.buf, '\n')
		out.buf = append(out.buf, ev.held...)
		out.buf = append(out.buf, '\n')
		if err = out.flush(); err == nil {
			err = s.W.Flush()
		}
		return false, err
	}
	stored.Remove()
	f := Classify(err)
	if f == nil {
		return true, err
	}
	event := s.Failed(f, err, out.spilled)
	if out.spilled {
		return true, err
	}
	if _, err := s.W.Write(event); err != nil {
		return true, err
	}
	return true, s.W.Flush()
}

// heldOutput holds an event's rewritten bytes up to max, then sends what
// it holds and all that follows to w.
type heldOutput struct {
	w       Flusher
	buf     []byte
	max     int
	spilled bool
	relayed func(n int64)
}

func (h *heldOutput) Write(p []byte) (int, error) {
	if h.spilled {
		h.relayed(int64(len(p)))
		return h.w.Write(p)
	}
	h.buf = append(h.buf, p...)
	if len(h.buf) > h.max {
		h.spilled = true
		return len(p), h.flush()
	}
	return len(p), nil
}

func (h *heldOutput) flush() error {
	_, err := h.w.Write(h.buf)
	h.relayed(int64(len(h.buf)))
	h.buf = h.buf[:0]
	return err
}

// dataLines turns the line breaks of rewritten data back into data lines.
type dataLines struct{ w io.Writer }

func (d dataLines) Write(p []byte) (int, error) {
	n := 0
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			k, err := d.w.Write(p)
			return n + k, err
		}
		if _, err := d.w.Write(p[:i]); err != nil {
			return n, err
		}
		if _, err := d.w.Write([]byte("\ndata: ")); err != nil {
			return n, err
		}
		n += i + 1
		p = p[i+1:]
	}
	return n, nil
}

// eventData reads the data of one SSE event from br, its data lines joined
// by "\n" (the SSE rule), and ends (io.EOF) at the event's blank line. Other
// field lines met on the way are kept in held; the body ending before the
// blank line is blobdecode.ErrTruncated.
type eventData struct {
	br     *bufio.Reader
	inLine bool
	done   bool
	held   []byte
}

// startLine consumes a data line's field name (and its one space).
func (e *eventData) startLine() {
	_, _ = e.br.Discard(len("data:"))
	if p, _ := e.br.Peek(1); len(p) == 1 && p[0] == ' ' {
		_, _ = e.br.Discard(1)
	}
	e.inLine = true
}

func (e *eventData) Read(p []byte) (int, error) {
	for {
		switch {
		case len(p) == 0:
			return 0, nil
		case e.done:
			return 0, io.EOF
		case e.inLine:
			if n, err := e.lineBytes(p); n > 0 || err != nil {
				return n, err
			}
			continue
		}
		if err := e.nextLine(); err != nil {
			return 0, err
		}
		if e.inLine {
			p[0] = '\n'
			return 1, nil
		}
	}
}

// lineBytes gives the current data line's bytes, without its end.
func (e *eventData) lineBytes(p []byte) (int, error) {
	buf, err := e.br.Peek(max(1, e.br.Buffered()))
	if len(buf) == 0 {
		return 0, e.endErr(err)
	}
	end := bytes.IndexByte(buf, '\n')
	if end < 0 {
		k := len(buf)
		if buf[k-1] == '\r' { // perhaps a CRLF cut in two
			if k == 1 {
				if more, _ := e.br.Peek(2); len(more) < 2 {
					return 0, e.endErr(io.ErrUnexpectedEOF)
				}
				return 0, nil
			}
			k--
		}
		n := copy(p, buf[:k])
		_, _ = e.br.Discard(n)
		return n, nil
	}
	k := end
	if k > 0 && buf[k-1] == '\r' {
		k--
	}
	n := copy(p, buf[:k])
	_, _ = e.br.Discard(n)
	if n == k {
		_, _ = e.br.Discard(end + 1 - k)
		e.inLine = false
	}
	return n, nil
}

// nextLine reads the start of the next line: another data line (inLine),
// the blank line ending the event (done), or a field line (held).
func (e *eventData) nextLine() error {
	p, err := peekLineStart(e.br, len("data:"))
	switch {
	case bytes.HasPrefix(p, []byte("data:")):
		e.startLine()
		return nil
	case len(p) > 0 && p[0] == '\n', bytes.HasPrefix(p, []byte("\r\n")):
		_, _ = e.br.Discard(bytes.IndexByte(p, '\n') + 1)
		e.done = true
		return io.EOF
	case len(p) == 0:
		return e.endErr(err)
	}
	line, err := e.br.ReadSlice('\n')
	if err != nil || len(e.held)+len(line) > maxHeldFieldLines {
		return errors.Join(e.endErr(err), &blobdecode.LimitError{What: "SSE field lines inside an event", Limit: maxHeldFieldLines})
	}
	e.held = append(e.held, line...)
	return nil
}

// peekLineStart peeks up to n bytes of the line starting at br, but never
// past its end: a short line (the blank line ending an event) is seen as
// soon as it arrives. A plain Peek(n) would wait for n bytes, and an
// upstream that sent its event and now waits for the client's answer would
// wait forever with it.
func peekLineStart(br *bufio.Reader, n int) ([]byte, error) {
	var p []byte
	var err error
	for k := 1; k <= n; k++ {
		if p, err = br.Peek(k); len(p) < k || p[k-1] == '\n' {
			return p, err
		}
	}
	return p, err
}

func (e *eventData) endErr(err error) error {
	if err == nil || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return blobdecode.ErrTruncated
	}
	return &blobdecode.ReadError{Err: err}
}
