package fileargs

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"sync"
)

// The upstream's side: the messages that ask for files get carriers. An
// SSE answer is read event by event; an event whole within max bytes that
// mentions x-mcp-file is looked at, and rewritten when it is an
// elicitation/create form request (2025-11-25: its id becomes a carrier)
// or an input_required result (2026-07-28: the keys of its
// elicitation/create form requests do) with file fields. A JSON answer
// that may be input_required is looked at the same way when it is whole
// within max bytes. Every other byte passes as it came.

// MarkAnswer returns the upstream's answer body (of declared length n,
// -1 unknown, media type mt as mime.ParseMediaType reads it from its
// Content-Type) with cs's carriers, and its length. mayRequire: a JSON
// answer may be input_required (a 2026-07-28 tools/call, resources/read
// or prompts/get).
func MarkAnswer(body io.ReadCloser, n int64, mt string, mayRequire bool, cs Carriers, max int64) (io.ReadCloser, int64) {
	switch {
	case mt == "text/event-stream":
		br := eventReaders.Get().(*bufio.Reader)
		br.Reset(body)
		return &markEvents{br: br, body: body, cs: cs, max: int(min(max, maxMarkedEvent)),
			event: takeEventBuffer(), spare: takeEventBuffer()}, -1
	case mt == "application/json" && mayRequire && n <= max:
		return markJSON(body, n, cs, int(max))
	}
	return body, n
}

// markJSON rewrites a JSON answer whole within max bytes; a longer one
// passes as it comes.
func markJSON(body io.ReadCloser, n int64, cs Carriers, max int) (io.ReadCloser, int64) {
	var head bytes.Buffer
	_, err := io.Copy(&head, io.LimitReader(body, int64(max)+1))
	var rest io.Reader = body
	switch {
	case err != nil:
		rest = errReader{err}
	case head.Len() <= max:
		b := head.Bytes()
		if out, ok := MarkMessage(b, cs); ok {
			b = out
		}
		return readCloser{bytes.NewReader(b), body}, int64(len(b))
	}
	return readCloser{io.MultiReader(&head, rest), body}, n
}

type readCloser struct {
	io.Reader
	io.Closer
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// maxMarkedEvent bounds the SSE event gathered to be looked at (a form
// request is far smaller; a larger event passes as it comes).
const maxMarkedEvent = 256 << 10

// markEvents is an SSE answer read event by event (a blank line ends one;
// lines end in "\n" or "\r\n"), each rewritten when it asks for files.
// The rest of an event over max passes as it comes.
type markEvents struct {
	br      *bufio.Reader
	body    io.Closer
	cs      Carriers
	max     int
	event   []byte // the event being gathered
	spare   []byte
	out     []byte // ready to be read
	midLine bool   // the last bytes read did not end a line
	passing bool   // the event is over max: it passes as it comes
	err     error
}

func (e *markEvents) Read(p []byte) (int, error) {
	for len(e.out) == 0 {
		if e.err != nil {
			e.event, e.spare = putEventBuffer(e.event), putEventBuffer(e.spare) // all read
			return 0, e.err
		}
		e.next()
	}
	n := copy(p, e.out)
	e.out = e.out[n:]
	return n, nil
}

func (e *markEvents) Close() error { return e.body.Close() }

// next reads a line, or the part of one the buffer holds.
func (e *markEvents) next() {
	line, err := e.br.ReadSlice('\n')
	ends := !e.midLine && (string(line) == "\n" || string(line) == "\r\n")
	e.midLine = len(line) > 0 && line[len(line)-1] != '\n'
	switch {
	case e.passing:
		e.emit(line)
		e.passing = !ends
	case ends:
		e.event = append(e.event, line...)
		e.emit(e.rewrite(e.event))
	default:
		e.event = append(e.event, line...)
		if len(e.event) > e.max {
			e.emit(e.event)
			e.passing = true
		}
	}
	if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
		e.out = append(e.out, e.event...) // an event cut off passes as it came
		e.event, e.err = e.event[:0], err
		e.br.Reset(nil) // never read again: nothing read refers to its buffer
		eventReaders.Put(e.br)
		e.br = nil
	}
}

// eventBuffers are markEvents' event buffers, back in the pool once their
// answer was read to its end.
var eventBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 16<<10); return &b }}

func takeEventBuffer() []byte { return (*eventBuffers.Get().(*[]byte))[:0] }

// putEventBuffer gives b back (one grown past 64 KiB is let go) and
// returns nil.
func putEventBuffer(b []byte) []byte {
	if b != nil && cap(b) <= 64<<10 {
		b = b[:0]
		eventBuffers.Put(&b)
	}
	return nil
}

// eventReaders are markEvents' readers, back in the pool once their
// answer ended (an answer closed before its end lets its reader go to the
// collector: a Close may come while a Read runs).
var eventReaders = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 32<<10) }}

// emit makes b the bytes to be read and starts a new event. Buffers grown
// for a large event are let go after it: a long stream keeps small ones.
func (e *markEvents) emit(b []byte) {
	if cap(e.spare) > 64<<10 && len(b) <= 4<<10 {
		e.spare = nil
	}
	e.out = append(e.spare[:0], b...)
	e.spare = e.out
	e.event = e.event[:0]
	if cap(e.event) > 64<<10 {
		e.event = nil
	}
}

// rewrite is the event ev with its carriers, or ev.
func (e *markEvents) rewrite(ev []byte) []byte {
	if !bytes.Contains(ev, []byte("x-mcp-file")) { // the cheap test first
		return ev
	}
	var data []byte
	lines := bytes.SplitAfter(ev, []byte("\n"))
	for _, l := range lines {
		if v, ok := bytes.CutPrefix(bytes.TrimRight(l, "\r\n"), []byte("data:")); ok {
			if data != nil {
				data = append(data, '\n')
			}
			data = append(data, bytes.TrimPrefix(v, []byte(" "))...)
		}
	}
	out, ok := MarkMessage(data, e.cs)
	if !ok {
		return ev
	}
	if bytes.IndexByte(out, '\n') >= 0 { // data lines joined: they become one
		var compact bytes.Buffer
		if json.Compact(&compact, out) != nil {
			return ev
		}
		out = compact.Bytes()
	}
	var b []byte
	wrote := false
	for _, l := range lines {
		switch {
		case !bytes.HasPrefix(l, []byte("data:")):
			b = append(b, l...)
		case !wrote:
			b = append(append(append(b, "data: "...), out...), '\n')
			wrote = true
		}
	}
	return b
}

// member is one member of a JSON object: its key and the spans of the
// key and the value.
type member struct {
	key                                string
	keyStart, keyEnd, valStart, valEnd int
}

// maxMembers bounds the members read of one object.
const maxMembers = 1024

// objectMembers reads the members of the JSON object b (nil when b is not
// one, or has more than maxMembers).
func objectMembers(b []byte) []member {
	dec := json.NewDecoder(bytes.NewReader(b))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	var ms []member
	for dec.More() && len(ms) < maxMembers {
		at := int(dec.InputOffset())
		t, err := dec.Token()
		key, ok := t.(string)
		if err != nil || !ok {
			return nil
		}
		m := member{key: key, keyEnd: int(dec.InputOffset())}
		m.keyStart = at + len(b[at:]) - len(bytes.TrimLeft(b[at:], ", \t\r\n"))
		var v json.RawMessage
		if dec.Decode(&v) != nil {
			return nil
		}
		m.valEnd = int(dec.InputOffset())
		m.valStart = m.valEnd - len(v)
		ms = append(ms, m)
	}
	if t, err := dec.Token(); err != nil || t != json.Delim('}') {
		return nil // more than maxMembers, or not closed
	}
	return ms
}

func memberNamed(ms []member, key string) (member, bool) {
	for _, m := range ms {
		if m.key == key {
			return m, true
		}
	}
	return member{}, false
}

// edit replaces b[start:end].
type edit struct {
	start, end int
	with       []byte
}

// MarkMessage is msg (one JSON-RPC message) with cs's carriers in place of
// the id of an elicitation/create form request with file fields, or of
// the keys of such requests in an input_required result; false when it
// has none.
func MarkMessage(msg []byte, cs Carriers) ([]byte, bool) {
	if !bytes.Contains(msg, []byte("x-mcp-file")) {
		return nil, false
	}
	top := objectMembers(msg)
	var edits []edit
	if id, ok := memberNamed(top, "id"); ok {
		if specs := elicitSpecs(msg); specs != nil {
			if c, ok := cs.seal(msg[id.valStart:id.valEnd], specs); ok {
				edits = append(edits, edit{id.valStart, id.valEnd, c})
			}
		}
	}
	if res, ok := memberNamed(top, "result"); ok {
		edits = append(edits, inputRequestEdits(msg, res.valStart, res.valEnd, cs)...)
	}
	if len(edits) == 0 {
		return nil, false
	}
	slices.SortFunc(edits, func(a, b edit) int { return a.start - b.start })
	var out []byte
	last := 0
	for _, e := range edits {
		out = append(append(out, msg[last:e.start]...), e.with...)
		last = e.end
	}
	return append(out, msg[last:]...), true
}

// inputRequestEdits are the carriers of the keys of an input_required
// result's elicitation requests with file fields (the result msg[i:j]).
func inputRequestEdits(msg []byte, i, j int, cs Carriers) []edit {
	res := objectMembers(msg[i:j])
	rt, ok := memberNamed(res, "resultType")
	if !ok || string(msg[i+rt.valStart:i+rt.valEnd]) != `"input_required"` {
		return nil
	}
	reqs, ok := memberNamed(res, "inputRequests")
	if !ok {
		return nil
	}
	i += reqs.valStart
	var edits []edit
	for _, m := range objectMembers(msg[i : i+reqs.valEnd-reqs.valStart]) {
		specs := elicitSpecs(msg[i+m.valStart : i+m.valEnd])
		if specs == nil {
			continue
		}
		if c, ok := cs.seal(msg[i+m.keyStart:i+m.keyEnd], specs); ok {
			edits = append(edits, edit{i + m.keyStart, i + m.keyEnd, c})
		}
	}
	return edits
}

// elicitSpecs are the file fields of req when it is an elicitation/create
// form request (nil otherwise).
func elicitSpecs(req []byte) map[string]Spec {
	var m struct {
		Method string `json:"method"`
		Params struct {
			Mode            string          `json:"mode"`
			RequestedSchema json.RawMessage `json:"requestedSchema"`
		} `json:"params"`
	}
	if json.Unmarshal(req, &m) != nil || m.Method != "elicitation/create" || (m.Params.Mode != "" && m.Params.Mode != "form") {
		return nil
	}
	return FormSpecs(m.Params.RequestedSchema)
}
