package fileargs

import (
	"bytes"
	"encoding/json"
)

// The walk of an elicitation answer: a push JSON lexer like the
// tools/call walk (walk.go), following only the path to the carrier and
// to the content values, and handing on every byte it is fed except a
// carrier string, held until it ends and then replaced.

// eRole is what an object on an elicitation answer's path is.
type eRole uint8

const (
	eOther     eRole = iota
	eTop             // the message
	eResult          // FormResponse: result
	eParams          // FormRetry: params
	eResponses       // FormRetry: params.inputResponses
	eResponse        // FormRetry: one of its values
	eContent         // an answer's content
)

type eFrame struct {
	object bool
	role   eRole
	key    []byte
}

// Elicit walks one elicitation answer as it streams. Not safe for
// concurrent use.
type Elicit struct {
	form    Form
	resolve Resolver
	st      walkState
	stack   []eFrame
	depth   int // containers open beyond the stack's bound
	esc     bool
	uhex    []byte
	capt    []byte
	closed  bool // the last step ended a string

	holding bool
	hold    []byte

	carried bool            // FormResponse: the id was seen
	orig    []byte          // FormResponse: the original id, when it was a carrier
	specs   map[string]Spec // in force: the id's (FormResponse), the current key's (FormRetry)
	input   string          // FormRetry: the current key, restored
	spec    *Spec           // the value being measured's, nil: judged at the carrier
	m       fieldMeasure
	pending []*facts // FormResponse: data URIs measured before the id
	refused *FieldRefusal
	out     []byte
}

// NewElicit returns the walk of a body that may be an elicitation answer
// of form.
func NewElicit(form Form, resolve Resolver) *Elicit {
	return &Elicit{form: form, resolve: resolve}
}

// Feed walks the next chunk and returns the bytes to forward in its place
// (valid until the next call). A *FieldRefusal means nothing more is to be
// forwarded; every later Feed returns it.
func (e *Elicit) Feed(p []byte) ([]byte, error) {
	if e.refused != nil {
		return nil, e.refused
	}
	e.out = e.out[:0]
	run := 0 // start of the bytes handed on as they are
	for i := 0; i < len(p); {
		was := e.holding
		n, err := e.step(p[i:])
		if err != nil {
			return nil, e.refuse(err)
		}
		if e.holding {
			if !was {
				e.out = append(e.out, p[run:i]...)
			}
			e.hold = append(e.hold, p[i:i+n]...)
			if err := e.held(); err != nil {
				return nil, e.refuse(err)
			}
			run = i + n
		}
		e.closed = false
		i += n
	}
	if !e.holding {
		e.out = append(e.out, p[run:]...)
	}
	return e.out, nil
}

// End is the body's end: the bytes of a carrier left open (handed on as
// they were), or the refusal of a value left open.
func (e *Elicit) End() ([]byte, error) {
	if e.refused != nil {
		return nil, e.refused
	}
	if e.st == wFileStr {
		e.st = wNextOrEnd
		if err := e.endField(); err != nil {
			return nil, e.refuse(err)
		}
	}
	if !e.holding {
		return nil, nil
	}
	e.holding = false
	return e.hold, nil
}

// Stop ends a measure left midway (the body will not be fed further).
func (e *Elicit) Stop() { e.m.stop() }

// Refused is the field refused, or nil.
func (e *Elicit) Refused() *FieldRefusal { return e.refused }

// Original is the original id of a FormResponse answer whose id was a
// carrier (raw JSON), or nil.
func (e *Elicit) Original() json.RawMessage { return e.orig }

func (e *Elicit) refuse(err error) error {
	e.m.stop()
	ref, ok := err.(*FieldRefusal)
	if !ok {
		ref = &FieldRefusal{Problem: err.Error()}
	}
	e.refused = ref
	return ref
}

// held handles the carrier bytes held so far: too many, it is not a
// carrier; ended, it is opened.
func (e *Elicit) held() error {
	if len(e.hold) > maxCarrier {
		e.out = append(e.out, e.hold...)
		e.holding, e.hold = false, e.hold[:0]
		e.opened(nil, nil, false)
		return nil
	}
	if !e.closed {
		return nil
	}
	orig, specs, ok := e.resolve(e.hold)
	if ok && len(orig) <= len(e.hold) {
		e.out = append(e.out, orig...)
		e.out = append(e.out, bytes.Repeat([]byte{' '}, len(e.hold)-len(orig))...)
	} else {
		e.out = append(e.out, e.hold...)
		orig, specs, ok = nil, nil, false
	}
	e.holding, e.hold = false, e.hold[:0]
	return e.opened(orig, specs, ok)
}

// opened takes a carrier's record: the specs in force from now on.
func (e *Elicit) opened(orig []byte, specs map[string]Spec, ok bool) error {
	e.specs = specs
	if e.form == FormRetry {
		e.input = ""
		if ok {
			_ = json.Unmarshal(orig, &e.input)
		}
		return nil
	}
	e.carried = true
	if ok {
		e.orig = append([]byte(nil), orig...)
	}
	pending := e.pending
	e.pending = nil
	for _, f := range pending {
		if err := e.judge(f); err != nil {
			return err
		}
	}
	return nil
}

// judge refuses f if the specs in force name its field and it breaks them.
func (e *Elicit) judge(f *facts) error {
	spec, ok := e.specs[f.field]
	if !ok {
		return nil
	}
	if problem, limit := f.judge(spec); problem != "" {
		return &FieldRefusal{Input: e.input, Field: f.field, Problem: problem, Limit: limit}
	}
	return nil
}

// step consumes at least one byte of p.
func (e *Elicit) step(p []byte) (int, error) {
	switch e.st {
	case wSkipStr:
		return e.skipString(p), nil
	case wKey:
		return e.captureKey(p), nil
	case wFileStr:
		return e.fileString(p)
	case wLiteral:
		if isDelim(p[0]) {
			e.st = wNextOrEnd
			return e.structural(p[0]), nil
		}
		return 1, nil
	}
	return e.structural(p[0]), nil
}

// structural handles one byte outside strings and literals.
func (e *Elicit) structural(c byte) int {
	switch c {
	case ' ', '\t', '\n', '\r':
		return 1
	}
	switch e.st {
	case wKeyOrEnd:
		switch c {
		case '"':
			e.st, e.capt, e.esc = wKey, e.capt[:0], false
			if f := e.top(); f != nil && f.role == eResponses {
				e.holding = true
			}
		case '}':
			e.pop()
		}
	case wColon:
		if c == ':' {
			e.st = wValue
		}
	case wNextOrEnd:
		switch c {
		case ',':
			e.st = wValue
			if f := e.top(); f != nil && f.object {
				e.st = wKeyOrEnd
			}
		case '}', ']':
			e.pop()
		}
	case wValue:
		e.value(c)
	}
	return 1
}

// value starts the value that begins with c.
func (e *Elicit) value(c byte) {
	parent, key := e.top(), []byte(nil)
	if parent != nil {
		key = parent.key
	}
	isID := e.form == FormResponse && parent != nil && parent.role == eTop && string(key) == "id"
	switch c {
	case '{', '[':
		e.push(c == '{', e.childRole(parent, key, c == '{'))
	case ']':
		e.pop()
	case '"':
		e.st, e.esc = wSkipStr, false
		switch {
		case isID:
			e.holding = true
		case parent != nil && parent.role == eContent:
			e.beginField(unquoteKey(key))
		}
	default:
		e.st = wLiteral
	}
	if isID && c != '"' {
		_ = e.opened(nil, nil, false) // an id that is no string: not a carrier
	}
}

// childRole is the role of a container that is the value of key in parent.
func (e *Elicit) childRole(parent *eFrame, key []byte, object bool) eRole {
	k := string(key)
	switch {
	case !object:
		return eOther
	case parent == nil:
		return eTop
	case e.form == FormResponse && parent.role == eTop && k == "result":
		return eResult
	case e.form == FormResponse && parent.role == eResult && k == "content":
		return eContent
	case e.form == FormRetry && parent.role == eTop && k == "params":
		return eParams
	case e.form == FormRetry && parent.role == eParams && k == "inputResponses":
		return eResponses
	case e.form == FormRetry && parent.role == eResponses:
		return eResponse
	case e.form == FormRetry && parent.role == eResponse && k == "content":
		return eContent
	}
	return eOther
}

// beginField starts measuring the content value of field: against its
// spec when the carrier came first, else (FormResponse, id not yet seen)
// for judging at the id.
func (e *Elicit) beginField(field string) {
	var spec *Spec
	if e.form == FormResponse && !e.carried {
		if len(e.pending) >= maxPendingFacts {
			return
		}
	} else {
		s, ok := e.specs[field]
		if !ok {
			return
		}
		spec = &s
	}
	e.spec = spec
	e.m.begin(field, spec)
	e.st, e.uhex = wFileStr, nil
}

// endField takes the measured value's facts.
func (e *Elicit) endField() error {
	f := e.m.end()
	if e.spec == nil {
		if f.dataURI {
			e.pending = append(e.pending, f)
		}
		return nil
	}
	return e.judge(f)
}

func (e *Elicit) top() *eFrame {
	if e.depth > 0 {
		return &eFrame{role: eOther}
	}
	if len(e.stack) == 0 {
		return nil
	}
	return &e.stack[len(e.stack)-1]
}

func (e *Elicit) push(object bool, r eRole) {
	if len(e.stack) >= maxWalkDepth || e.depth > 0 {
		e.depth++
	} else {
		e.stack = append(e.stack, eFrame{object: object, role: r})
	}
	e.st = wValue
	if object {
		e.st = wKeyOrEnd
	}
}

func (e *Elicit) pop() {
	if e.depth > 0 {
		e.depth--
	} else if len(e.stack) > 0 {
		e.stack = e.stack[:len(e.stack)-1]
	}
	e.st = wNextOrEnd
}

// scanString finds the end of string bytes: n consumed, closed when the
// closing quote was among them.
func scanString(p []byte, esc *bool) (n int, closed bool) {
	for i := 0; i < len(p); {
		if *esc {
			*esc = false
			i++
			continue
		}
		j := bytes.IndexAny(p[i:], `"\`)
		if j < 0 {
			return len(p), false
		}
		i += j
		if p[i] == '"' {
			return i + 1, true
		}
		*esc = true
		i++
	}
	return len(p), false
}

func (e *Elicit) skipString(p []byte) int {
	n, closed := scanString(p, &e.esc)
	if closed {
		e.st, e.closed = wNextOrEnd, true
	}
	return n
}

// captureKey reads a key, keeping up to maxCapture raw bytes.
func (e *Elicit) captureKey(p []byte) int {
	n, closed := scanString(p, &e.esc)
	end := n
	if closed {
		end--
	}
	if room := maxCapture - len(e.capt); room > 0 {
		e.capt = append(e.capt, p[:min(end, room)]...)
	}
	if closed {
		if f := e.top(); f != nil {
			f.key = append(f.key[:0], e.capt...)
		}
		e.st, e.closed = wColon, true
	}
	return n
}

// fileString passes a content value's bytes, escapes undone, to its
// measure, up to and including its closing quote.
func (e *Elicit) fileString(p []byte) (int, error) {
	for i := 0; i < len(p); {
		if e.uhex != nil || e.esc {
			if err := e.escape(p[i]); err != nil {
				return i, err
			}
			i++
			continue
		}
		j := bytes.IndexAny(p[i:], `"\`)
		if j < 0 {
			return len(p), e.pass(p[i:])
		}
		if err := e.pass(p[i : i+j]); err != nil {
			return i, err
		}
		i += j
		if p[i] == '\\' {
			e.esc = true
			i++
			continue
		}
		e.st = wNextOrEnd
		return i + 1, e.endField()
	}
	return len(p), nil
}

// pass hands value bytes to the measure; one that ended early has found
// a problem.
func (e *Elicit) pass(p []byte) error {
	if len(p) == 0 || e.m.write(p) {
		return nil
	}
	return e.endField()
}

// escape takes one byte of a JSON escape in a measured value.
func (e *Elicit) escape(c byte) error {
	if out, done := unescape(&e.esc, &e.uhex, c); done {
		return e.pass(out)
	}
	return nil
}
