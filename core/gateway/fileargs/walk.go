package fileargs

import (
	"bytes"
	"encoding/json"
)

// The file-argument walk (fileargs.go) reads a tools/call body as it passes
// to the upstream, one chunk at a time, without holding it: a push JSON
// lexer that follows only the path to params.name and
// params.arguments.{arg}. Every other value is skipped; a string is skipped
// in bulk (to its next quote or backslash), so a large value costs only
// the bytes looked at. Structure is checked only as far as finding the
// path needs: the upstream judges the JSON.

// walkState is where the lexer is.
type walkState uint8

const (
	wValue     walkState = iota // before a value
	wKeyOrEnd                   // after '{': a key or '}'
	wKey                        // in a key string
	wColon                      // after a key
	wNextOrEnd                  // after a value: ',' or the container's end
	wSkipStr                    // in a string value not looked at
	wNameStr                    // in the params.name string
	wFileStr                    // in a file argument's string: its bytes go to the check
	wLiteral                    // in a number, true, false or null
	wPeekStr                    // in a file argument's string that may be a file URI (expand.go)
)

// role is what an object on the walk's path is.
type role uint8

const (
	roleOther  role = iota
	roleTop         // the message
	roleParams      // params
	roleArgs        // params.arguments
)

// maxCapture bounds a key or the tool name kept while walking.
const maxCapture = 1024

// walkFrame is one open container: its role and, for an object, the key
// whose value comes next.
type walkFrame struct {
	object bool
	role   role
	key    []byte
}

// fileSink receives a file argument's string as it arrives, its JSON
// escapes undone: begin before its first byte (an error: the argument is
// not checked), end after its last. An error of write or end refuses the
// request.
type fileSink interface {
	begin(arg string) error
	write(p []byte) error
	end() error
	// holds reports, after begin, that the string is withheld from what the
	// walk forwards, and replacement, after end, the string's new contents.
	holds() bool
	replacement() string
	// expands reports that a file URI given as arg is expanded (only
	// while rewriting), and expand opens one.
	expands(arg string) bool
	expand(arg, uri string) (*dataURIReader, error)
}

// walker is the push lexer. name is called once the tool name is known
// (from params.name), args when params.arguments begins (isFile then says
// which arguments are files).
type walker struct {
	st     walkState
	stack  []walkFrame
	esc    bool   // in a string, after a backslash
	uhex   []byte // a \u escape's hex digits, in a file string
	capt   []byte // the key or name being read (raw, escapes kept)
	name   string
	isFile func(tool, arg string) bool
	sink   fileSink
	depth  int // containers open beyond the stack's bound
	// rewrite: the bytes to forward are appended to out as the walk goes,
	// a withheld file string (hold) replaced by the sink's replacement.
	rewrite bool
	hold    bool
	out     []byte
	// peekArg is the argument whose string is peeked (wPeekStr); splices
	// are the data URIs of the file URIs expanded, at offsets of out.
	peekArg string
	splices []splice
}

// maxWalkDepth bounds the containers the walk tracks; deeper ones are
// counted, not kept.
const maxWalkDepth = 64

// feed walks p. An error is the sink's (a file refused).
func (w *walker) feed(p []byte) error {
	for i := 0; i < len(p); {
		held := w.hold && w.st == wFileStr
		peeked := w.st == wPeekStr // peekString forwards what it releases
		n, err := w.step(p[i:])
		if err != nil {
			return err
		}
		if w.rewrite && !peeked {
			w.forward(p[i:i+n], held)
		}
		i += n
	}
	return nil
}

// forward appends the bytes of one step to out: all of them, unless they
// were the contents of a withheld string, which ends with its
// replacement and the closing quote.
func (w *walker) forward(b []byte, held bool) {
	switch {
	case !held:
		w.out = append(w.out, b...)
	case w.st != wFileStr: // the step consumed the closing quote
		w.hold = false
		w.out = appendJSONContents(w.out, w.sink.replacement())
		w.out = append(w.out, '"')
	}
}

// appendJSONContents appends s as the contents of a JSON string (no HTML
// escapes: a link's '&' stays as it is).
func appendJSONContents(out []byte, s string) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // "…"\n
	t := b.Bytes()
	return append(out, t[1:len(t)-2]...)
}

// step consumes at least one byte of p.
func (w *walker) step(p []byte) (int, error) {
	switch w.st {
	case wSkipStr:
		return w.skipString(p), nil
	case wKey, wNameStr:
		return w.captureString(p), nil
	case wFileStr:
		return w.fileString(p)
	case wPeekStr:
		return w.peekString(p)
	case wLiteral:
		if isDelim(p[0]) {
			w.st = wNextOrEnd
			return w.structural(p[0]), nil
		}
		return 1, nil
	}
	return w.structural(p[0]), nil
}

func isDelim(c byte) bool {
	return c == ',' || c == '}' || c == ']' || c == ' ' || c == '\t' || c == '\n' || c == '\r'
}

// structural handles one byte outside strings and literals.
func (w *walker) structural(c byte) int {
	switch c {
	case ' ', '\t', '\n', '\r':
		return 1
	}
	switch w.st {
	case wKeyOrEnd:
		switch c {
		case '"':
			w.st, w.capt = wKey, w.capt[:0]
		case '}':
			w.pop()
		}
	case wColon:
		if c == ':' {
			w.st = wValue
		}
	case wNextOrEnd:
		switch c {
		case ',':
			w.st = wValue
			if f := w.top(); f != nil && f.object {
				w.st = wKeyOrEnd
			}
		case '}', ']':
			w.pop()
		}
	case wValue:
		w.value(c)
	}
	return 1
}

// value starts the value that begins with c.
func (w *walker) value(c byte) {
	parent, key := w.top(), []byte(nil)
	if parent != nil {
		key = parent.key
	}
	switch c {
	case '{', '[':
		w.push(c == '{', childRole(parent, key))
	case ']':
		w.pop() // an empty array
	case '"':
		w.st, w.esc = wSkipStr, false
		switch {
		case parent != nil && parent.role == roleParams && string(key) == "name":
			w.st, w.capt = wNameStr, w.capt[:0]
		case parent != nil && parent.role == roleArgs && w.name != "" && w.isFile(w.name, unquoteKey(key)):
			w.st, w.uhex = wFileStr, nil
			if arg := unquoteKey(key); w.rewrite && w.sink.expands(arg) {
				w.st, w.peekArg, w.capt = wPeekStr, arg, w.capt[:0]
			} else if err := w.sink.begin(unquoteKey(key)); err != nil {
				w.st = wSkipStr // nothing to check: the upstream judges the value
			} else {
				w.hold = w.sink.holds()
			}
		}
	default:
		w.st = wLiteral
	}
}

// childRole is the role of an object that is the value of key in parent.
func childRole(parent *walkFrame, key []byte) role {
	switch {
	case parent == nil:
		return roleTop
	case parent.role == roleTop && string(key) == `params`:
		return roleParams
	case parent.role == roleParams && string(key) == `arguments`:
		return roleArgs
	}
	return roleOther
}

func (w *walker) top() *walkFrame {
	if len(w.stack) == 0 || w.depth > 0 {
		if w.depth > 0 {
			return &walkFrame{role: roleOther}
		}
		return nil
	}
	return &w.stack[len(w.stack)-1]
}

func (w *walker) push(object bool, r role) {
	if len(w.stack) >= maxWalkDepth || w.depth > 0 {
		w.depth++
	} else {
		w.stack = append(w.stack, walkFrame{object: object, role: r})
	}
	w.st = wValue
	if object {
		w.st = wKeyOrEnd
	}
}

func (w *walker) pop() {
	if w.depth > 0 {
		w.depth--
	} else if len(w.stack) > 0 {
		w.stack = w.stack[:len(w.stack)-1]
	}
	w.st = wNextOrEnd
}

// skipString skips string bytes up to and including the closing quote.
func (w *walker) skipString(p []byte) int {
	for i := 0; i < len(p); {
		if w.esc {
			w.esc = false
			i++
			continue
		}
		j := bytes.IndexAny(p[i:], `"\`)
		if j < 0 {
			return len(p)
		}
		i += j
		if p[i] == '"' {
			w.st = wNextOrEnd
			return i + 1
		}
		w.esc = true
		i++
	}
	return len(p)
}

// captureString reads a key or the tool name, keeping up to maxCapture
// raw bytes.
func (w *walker) captureString(p []byte) int {
	in := w.st
	n := w.skipString(p)
	end := n
	if w.st != in { // the closing quote was consumed
		end--
	}
	if room := maxCapture - len(w.capt); room > 0 {
		w.capt = append(w.capt, p[:min(end, room)]...)
	}
	if w.st == in {
		return n
	}
	if in == wKey {
		if f := w.top(); f != nil {
			f.key = append(f.key[:0], w.capt...)
		}
		w.st = wColon
	} else {
		w.name = unquoteKey(w.capt)
	}
	return n
}

// unquoteKey is the string whose JSON contents (without quotes) are raw.
func unquoteKey(raw []byte) string {
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw)
	}
	var s string
	if json.Unmarshal(append(append([]byte{'"'}, raw...), '"'), &s) != nil {
		return string(raw)
	}
	return s
}
