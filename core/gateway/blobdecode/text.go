package blobdecode

import (
	"io"
	"unicode/utf8"
)

// replacement is U+FFFD in UTF-8.
var replacement = []byte(string(utf8.RuneError))

// utf8Writer writes text to w with each invalid UTF-8 byte made U+FFFD,
// as encoding/json decodes a string. A sequence cut between two writes
// waits in carry (at most 3 bytes) for the next; Flush ends the text.
type utf8Writer struct {
	w     io.Writer
	carry [utf8.UTFMax]byte
	nc    int
}

func (u *utf8Writer) Write(p []byte) (int, error) {
	n := len(p)
	for u.nc > 0 && len(p) > 0 {
		u.carry[u.nc] = p[0]
		u.nc++
		p = p[1:]
		if err := u.drainCarry(false); err != nil {
			return 0, err
		}
	}
	if len(p) == 0 {
		return n, nil // all of it went to carry
	}
	// Hold back a sequence cut at the end of p.
	tail := len(p)
	for i := len(p) - 1; i >= 0 && i >= len(p)-utf8.UTFMax; i-- {
		if utf8.RuneStart(p[i]) {
			if !utf8.FullRune(p[i:]) {
				tail = i
			}
			break
		}
	}
	if err := u.valid(p[:tail]); err != nil {
		return 0, err
	}
	u.nc = copy(u.carry[:], p[tail:])
	return n, nil
}

// drainCarry writes what carry holds that is known to be valid or not;
// with final set all of it.
func (u *utf8Writer) drainCarry(final bool) error {
	for u.nc > 0 && (final || utf8.FullRune(u.carry[:u.nc])) {
		c, size := utf8.DecodeRune(u.carry[:u.nc])
		out := u.carry[:size]
		if c == utf8.RuneError && size == 1 {
			out = replacement
		}
		if _, err := u.w.Write(out); err != nil {
			return err
		}
		u.nc = copy(u.carry[:], u.carry[size:u.nc])
	}
	return nil
}

// valid writes p, whose last sequence is whole, replacing invalid bytes.
func (u *utf8Writer) valid(p []byte) error {
	if utf8.Valid(p) {
		_, err := u.w.Write(p)
		return err
	}
	start := 0
	for i := 0; i < len(p); {
		c, size := utf8.DecodeRune(p[i:])
		if c != utf8.RuneError || size > 1 {
			i += size
			continue
		}
		if _, err := u.w.Write(p[start:i]); err != nil {
			return err
		}
		if _, err := u.w.Write(replacement); err != nil {
			return err
		}
		i++
		start = i
	}
	_, err := u.w.Write(p[start:])
	return err
}

// Flush writes what is left of a cut sequence, each byte as U+FFFD.
func (u *utf8Writer) Flush() error { return u.drainCarry(true) }
