package fileargs

import (
	"encoding/json"
	"io"
)

// IDScan finds the top-level "id" of a JSON-RPC request that names it
// after its params, as the official TypeScript SDK clients write every
// request ({"method":…,"params":…,"jsonrpc":"2.0","id":N}): a refused file
// of such a request is answered for its id, so the client can match the
// error to its request instead of waiting for an answer that never comes.
// It watches the body's bytes as a [Gate] reads them (a state machine,
// nothing held but the id) and, after a refusal, reads the rest of the
// body to its id ([IDScan.Find]). The zero IDScan, and a nil one, watch
// nothing.
type IDScan struct {
	src       io.Reader
	depth     int
	inStr     bool
	esc       bool
	wantKey   bool // at the top level, a member's key comes next
	inKey     bool
	isID      bool // the key just read is "id"
	capturing bool
	key       []byte
	val       []byte
	id        json.RawMessage
	done      bool // the id was read, or the top-level object ended
}

// maxIDBytes bounds an id read: a longer one is not found.
const maxIDBytes = 256

// Wrap returns src watched by s when on (a request whose id the gateway
// has not seen yet), else src itself.
func (s *IDScan) Wrap(src io.Reader, on bool) io.Reader {
	if s == nil || !on {
		return src
	}
	s.src = src
	return s
}

func (s *IDScan) Read(p []byte) (int, error) {
	n, err := s.src.Read(p)
	s.scan(p[:n])
	return n, err
}

// Find is id when known, else the id read from the body: the bytes s saw,
// then head and rest (what the gate left unread, either may be empty or
// nil), read until the id or the body's end. nil when none is found.
func (s *IDScan) Find(id json.RawMessage, head []byte, rest io.Reader) json.RawMessage {
	if id != nil || s == nil || s.src == nil {
		return id
	}
	s.scan(head)
	if rest != nil {
		buf := make([]byte, 32<<10)
		for !s.done {
			n, err := rest.Read(buf)
			s.scan(buf[:n])
			if err != nil {
				break
			}
		}
	}
	return s.id
}

func (s *IDScan) scan(p []byte) {
	for _, c := range p {
		if s.done {
			return
		}
		if s.inStr {
			s.scanString(c)
			continue
		}
		s.scanOutside(c)
	}
}

func (s *IDScan) scanString(c byte) {
	s.keep(c)
	switch {
	case s.esc:
		s.esc = false
	case c == '\\':
		s.esc = true
	case c == '"':
		s.inStr = false
		if s.inKey {
			s.inKey, s.isID = false, string(s.key) == "id"
		}
		return
	}
	if s.inKey && len(s.key) < 8 {
		s.key = append(s.key, c)
	}
}

func (s *IDScan) scanOutside(c byte) {
	switch c {
	case '"':
		s.inStr = true
		if s.depth == 1 && s.wantKey {
			s.inKey, s.wantKey, s.key = true, false, s.key[:0]
			return
		}
	case '{', '[':
		s.depth++
		if s.depth == 1 {
			s.wantKey = true
			return
		}
	case '}', ']':
		if s.depth == 1 {
			s.endValue()
			s.done = true
		}
		s.depth--
		return
	case ',':
		if s.depth == 1 {
			s.endValue()
			s.wantKey = true
			return
		}
	case ':':
		if s.depth == 1 && s.isID {
			s.capturing, s.isID, s.val = true, false, s.val[:0]
			return
		}
	case ' ', '\t', '\r', '\n':
		return
	}
	s.keep(c)
}

// keep adds c to the id being read.
func (s *IDScan) keep(c byte) {
	if !s.capturing {
		return
	}
	if len(s.val) >= maxIDBytes {
		s.capturing, s.val = false, s.val[:0]
		return
	}
	s.val = append(s.val, c)
}

// endValue ends a top-level member: the id when it was one.
func (s *IDScan) endValue() {
	if s.capturing && len(s.val) > 0 && json.Valid(s.val) {
		s.id, s.done = json.RawMessage(append([]byte(nil), s.val...)), true
	}
	s.capturing = false
}
