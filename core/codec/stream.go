package codec

import (
	"encoding/base64"
	"io"
)

// Chunk sizes of the streaming encoder and decoder: big enough that the
// per-call overhead vanishes, small enough to stay in L2 with the output.
const (
	encChunk = 48 << 10 // input bytes per Encode call (64 KiB of output)
	decChunk = 64 << 10 // input characters buffered by the decoder
)

// maxConsecutiveEmptyReads is how many (0, nil) reads the decoder tolerates
// before reporting io.ErrNoProgress, as bufio does.
const maxConsecutiveEmptyReads = 100

type encoder struct {
	enc  *Encoding
	w    io.Writer
	err  error
	buf  [3]byte // pending input, less than one group
	nbuf int
	out  []byte // encChunk/3*4 bytes, allocated on the first Write
	in   []byte // encChunk bytes, allocated by the first ReadFrom
}

// NewEncoder returns a streaming base64 encoder: data written to it is
// encoded with enc and written to w in chunks of up to 64 KiB. The caller
// must Close it to flush the final partial group (and padding); Close does
// not close w. Buffers are allocated once, on first use; Write and ReadFrom
// do not allocate. The encoder is not safe for concurrent use.
func NewEncoder(enc *Encoding, w io.Writer) io.WriteCloser {
	return &encoder{enc: enc, w: w}
}

func (e *encoder) Write(p []byte) (n int, err error) {
	if e.err != nil {
		return 0, e.err
	}
	if e.out == nil {
		e.out = make([]byte, encChunk/3*4)
	}
	// Leading fringe.
	if e.nbuf > 0 {
		i := copy(e.buf[e.nbuf:], p)
		e.nbuf += i
		n += i
		p = p[i:]
		if e.nbuf < 3 {
			return n, nil
		}
		e.enc.Encode(e.out[:4], e.buf[:])
		e.nbuf = 0
		if _, e.err = e.w.Write(e.out[:4]); e.err != nil {
			return n, e.err
		}
	}
	// Whole groups, a chunk at a time.
	for len(p) >= 3 {
		nn := min(len(p)/3*3, encChunk)
		e.enc.Encode(e.out, p[:nn])
		if _, e.err = e.w.Write(e.out[:nn/3*4]); e.err != nil {
			return n, e.err
		}
		n += nn
		p = p[nn:]
	}
	// Trailing fringe.
	e.nbuf = copy(e.buf[:], p)
	return n + e.nbuf, nil
}

// ReadFrom encodes everything r yields until io.EOF, reading straight into
// the encoder's own buffer (so io.Copy needs no buffer of its own).
func (e *encoder) ReadFrom(r io.Reader) (n int64, err error) {
	if e.err != nil {
		return 0, e.err
	}
	if e.in == nil {
		e.in = make([]byte, encChunk)
	}
	empty := 0
	for {
		m, rerr := r.Read(e.in)
		if m > 0 {
			empty = 0
			n += int64(m)
			if _, err := e.Write(e.in[:m]); err != nil {
				return n, err
			}
		} else if rerr == nil {
			if empty++; empty >= maxConsecutiveEmptyReads {
				return n, io.ErrNoProgress
			}
		}
		if rerr == io.EOF {
			return n, nil
		}
		if rerr != nil {
			return n, rerr
		}
	}
}

// Close flushes any pending partial group, with padding. It is an error to
// call Write after Close.
func (e *encoder) Close() error {
	if e.err == nil && e.nbuf > 0 {
		var out [4]byte
		e.enc.Encode(out[:], e.buf[:e.nbuf])
		_, e.err = e.w.Write(out[:e.enc.EncodedLen(e.nbuf)])
		e.nbuf = 0
	}
	return e.err
}

// decoder is a streaming decoder with the semantics of the stdlib's
// base64.NewDecoder; see [NewDecoder].
type decoder struct {
	enc *Encoding
	r   io.Reader

	in     []byte // decChunk bytes of input
	lo, hi int    // unconsumed input is in[lo:hi]
	out    []byte // staging for reads smaller than a quantum's output
	olo    int    // undelivered output is out[olo:]

	q    [4]byte // the quantum being gathered across CR/LF, stripped
	nq   int
	qoff int64 // stripped stream offset of q[0]
	off  int64 // stripped stream offset of the next character

	padded  bool  // a padded quantum was decoded; only CR/LF may follow
	err     error // terminal: io.EOF, a CorruptInputError or a read error
	corrupt bool  // err is about the input: CorruptInputError or io.ErrUnexpectedEOF
	rerr    error // the error the last r.Read returned
}

// NewDecoder returns a streaming base64 decoder reading from r. Like the
// stdlib's base64.NewDecoder it ignores CR and LF, returns
// io.ErrUnexpectedEOF when a padded encoding's input ends inside a quantum,
// and reports malformed input as an [encoding/base64.CorruptInputError]
// whose offset counts input bytes with CR and LF removed.
//
// The stdlib counts that offset from the start of its current refill window
// (at most 1 KiB, so it depends on how r splits the input); this decoder
// counts from the start of the stream. The two agree whenever the error lies
// in the stdlib's first window, except for an unpadded encoding's final
// 1–3 characters, which the stdlib counts from their own start. One more
// window artefact is not reproduced: data after a padded quantum is always
// an error here (as in [Encoding.Decode]), while the stdlib accepts it when
// a window boundary happens to fall right after the padding.
//
// The decoder reads r in chunks of up to 64 KiB and decodes straight into
// the caller's buffer when it holds at least 3 bytes. Buffers are allocated
// once, in NewDecoder; Read and WriteTo do not allocate. It is not safe for
// concurrent use.
func NewDecoder(enc *Encoding, r io.Reader) io.Reader {
	return newDecoder(enc, r)
}

func newDecoder(enc *Encoding, r io.Reader) *decoder {
	return &decoder{enc: enc, r: r, in: make([]byte, decChunk)}
}

// staging returns the output staging buffer, allocated on first use.
func (d *decoder) staging() []byte {
	if cap(d.out) == 0 {
		d.out = make([]byte, 0, decChunk/4*3)
	}
	return d.out[:cap(d.out)]
}

func (d *decoder) Read(p []byte) (int, error) {
	if d.olo < len(d.out) {
		n := copy(p, d.out[d.olo:])
		d.olo += n
		return n, nil
	}
	if len(p) == 0 {
		return 0, nil
	}
	if len(p) < 3 {
		// Too small for one quantum: decode into the staging buffer.
		buf := d.staging()
		m, err := d.fill(buf)
		d.out, d.olo = buf[:m], 0
		n := copy(p, d.out)
		d.olo = n
		if n > 0 {
			return n, nil
		}
		return 0, err
	}
	n, err := d.fill(p)
	if err == io.EOF && n > 0 {
		err = nil // report io.EOF on its own, on the next call
	}
	return n, err
}

// WriteTo decodes the rest of the stream into w.
func (d *decoder) WriteTo(w io.Writer) (n int64, err error) {
	if d.olo < len(d.out) {
		m, err := w.Write(d.out[d.olo:])
		n += int64(m)
		d.olo += m
		if err != nil {
			return n, err
		}
	}
	buf := d.staging()
	for {
		m, derr := d.fill(buf)
		if m > 0 {
			d.out, d.olo = buf[:m], m // delivered once written
			k, err := w.Write(buf[:m])
			n += int64(k)
			if err != nil {
				d.olo = k
				return n, err
			}
			if k < m {
				d.olo = k
				return n, io.ErrShortWrite
			}
		}
		if derr == io.EOF {
			return n, nil
		}
		if derr != nil {
			return n, derr
		}
	}
}

// fill decodes into dst (len(dst) >= 3), reading r as needed, until it has
// written something or reached a terminal state. It returns the bytes
// written and the terminal error, if any was reached during this call or
// before.
func (d *decoder) fill(dst []byte) (int, error) {
	empty := 0
	for {
		if d.err != nil {
			return 0, d.err
		}
		// A corrupt-input error comes with the bytes decoded before it.
		if n := d.decode(dst, d.rerr == io.EOF); n > 0 || d.err != nil {
			return n, d.err
		}
		// decode consumed all the input without producing a byte.
		if d.rerr != nil {
			d.err = d.rerr // io.EOF was handled by decode
			return 0, d.err
		}
		d.lo, d.hi = 0, 0
		m, err := d.r.Read(d.in)
		d.hi, d.rerr = m, err
		if m > 0 || err != nil {
			empty = 0 // only empty reads in a row count: input that decodes to nothing (line breaks) is progress
		} else if empty++; empty >= maxConsecutiveEmptyReads {
			d.err = io.ErrNoProgress
			return 0, d.err
		}
	}
}

// decode decodes whole quanta from in[lo:hi] into dst and returns the bytes
// written. It stops when the input is used up (all of it: a partial quantum
// is kept in q), when dst has no room for the next quantum, or on a terminal
// condition, which it records in d.err. eof says r has no more input, so a
// pending partial quantum is final.
func (d *decoder) decode(dst []byte, eof bool) int {
	n := 0
	for {
		if d.nq == 0 && !d.padded && d.lo < d.hi {
			src := d.in[d.lo:d.hi]
			var ns, nd int
			if d.enc.fastDecode(len(src)) {
				ns, nd = d.enc.decodePrefix(dst[n:], src)
			} else {
				ns, nd = decodeScalar(dst[n:], src, &d.enc.tables.Decode)
			}
			d.lo += ns
			d.off += int64(ns)
			n += nd
		}
		// Gather the next quantum, skipping CR and LF, across reads.
		for d.nq < 4 && d.lo < d.hi {
			c := d.in[d.lo]
			d.lo++
			if c == '\n' || c == '\r' {
				continue
			}
			if d.nq == 0 {
				d.qoff = d.off
			}
			d.q[d.nq] = c
			d.nq++
			d.off++
		}
		room := len(dst)-n >= 3
		if d.nq < 4 {
			if !eof {
				return n
			}
			switch {
			case d.nq == 0:
				d.err = io.EOF
			case d.enc.padChar != NoPadding:
				d.err, d.corrupt = io.ErrUnexpectedEOF, true
			case !room:
				return n // the final characters wait for the next call
			default:
				// An unpadded encoding's final 1–3 characters.
				m, err := d.enc.std.Decode(dst[n:], d.q[:d.nq])
				n += m
				d.err, d.corrupt = rebase(err, d.qoff), err != nil
				if d.err == nil {
					d.err = io.EOF
				}
			}
			d.nq = 0
			return n
		}
		if !room {
			return n // q waits for the next call
		}
		d.nq = 0
		if d.padded {
			d.err, d.corrupt = base64.CorruptInputError(d.qoff), true // data after padding
			return n
		}
		m, err := d.enc.std.Decode(dst[n:], d.q[:])
		n += m
		if err != nil {
			d.err, d.corrupt = rebase(err, d.qoff), true
			return n
		}
		if m < 3 {
			d.padded = true
		}
	}
}
