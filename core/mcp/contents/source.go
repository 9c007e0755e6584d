package contents

import (
	"errors"
	"io"
	"os"
	"runtime/debug"

	"github.com/mcpblob/mcpblob/core/codec"
)

// ErrFileChanged means a file shrank while it was being encoded from a
// mapping of it.
var ErrFileChanged = errors.New("mcp: resource file shrank while being read")

// source hands out a stream's raw bytes encoded, one chunk at a time.
type source interface {
	// encode encodes the next chunk, of at most p.raw bytes and at most
	// left (the raw bytes still due), into dst (p.out bytes) and returns the
	// raw bytes it took. A chunk shorter than both means the source ended
	// early ([ErrShortBody]).
	encode(p plan, dst []byte, left int64) (int, error)
	// mappable reports whether plans may map windows of this source.
	mappable() bool
	// close releases any mapping; it does not close the reader.
	close()
}

// mapMinBody is the smallest body encoded from mapped windows
// (BenchmarkWriteBase64): at 1 MiB reading into a buffer that stays in L2
// costs less than setting up a mapping; from 2 MiB mapping wins, by about
// 1.5× at 4 and 64 MiB.
const mapMinBody = 2 << 20

// newSource picks how to read n bytes of r: a regular file that holds them
// all from its current offset is encoded from mapped windows where the
// plan allows (no copy into a buffer), else with pread; anything else, and
// any body under mapMinBody, is read into pooled buffers.
func newSource(r io.Reader, n int64) source {
	if n < mapMinBody || !mapSupported {
		return readSource{r}
	}
	if f, off, ok := fileOf(r, n); ok {
		return &fileSource{f: f, off: off, canMap: true}
	}
	return readSource{r}
}

// fileOf finds the regular file behind r (through Unwrap() io.ReadCloser
// wrappers, the convention of the sendfile path) and its offset, when the
// file holds at least n bytes from there.
func fileOf(r io.Reader, n int64) (*os.File, int64, bool) {
	for range 4 {
		switch v := r.(type) {
		case *os.File:
			fi, err := v.Stat()
			if err != nil || !fi.Mode().IsRegular() {
				return nil, 0, false
			}
			off, err := v.Seek(0, io.SeekCurrent)
			if err != nil || fi.Size()-off < n {
				return nil, 0, false
			}
			return v, off, true
		case interface{ Unwrap() io.ReadCloser }:
			r = v.Unwrap()
		default:
			return nil, 0, false
		}
	}
	return nil, 0, false
}

// readSource reads chunks into a pooled raw buffer, held only while the
// chunk is read and encoded, never while it is written.
type readSource struct{ r io.Reader }

func (s readSource) encode(p plan, dst []byte, left int64) (int, error) {
	return encodeRead(p, dst, left, func(b []byte) (int, error) { return io.ReadFull(s.r, b) })
}

func (readSource) mappable() bool { return false }
func (readSource) close()         {}

// encodeRead fills a pooled raw buffer with read and encodes it into dst.
func encodeRead(p plan, dst []byte, left int64, read func([]byte) (int, error)) (int, error) {
	bp := getRaw(p.out)
	defer putRaw(bp)
	in := (*bp)[:min(int64(p.raw), left)]
	m, err := read(in)
	codec.StdEncoding.Encode(dst, in[:m])
	if m < len(in) {
		if err == nil || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			err = ErrShortBody
		}
		return m, err
	}
	return m, nil
}

// fileSource encodes a regular file from its offset off: from a mapped
// window when the plan has one (and mapping works), else through pread. A
// mapping never outgrows the current plan's window: when a plan shrinks
// below what is still mapped, the rest of the window is read instead.
type fileSource struct {
	f      *os.File
	off    int64  // file offset of the first byte neither mapped nor read
	m      []byte // the current mapping, page aligned
	data   []byte // the part of m not encoded yet
	canMap bool
}

func (s *fileSource) mappable() bool { return s.canMap }

func (s *fileSource) encode(p plan, dst []byte, left int64) (int, error) {
	if len(s.data) > p.window { // the plan no longer covers what is mapped
		s.off -= int64(len(s.data))
		s.close()
	}
	if len(s.data) == 0 && s.canMap && p.window > 0 {
		s.close()
		if err := s.mapNext(min(int64(p.window), left)); err != nil {
			s.canMap = false // read the rest
		}
	}
	if len(s.data) == 0 {
		m, err := encodeRead(p, dst, left, func(b []byte) (int, error) { return s.f.ReadAt(b, s.off) })
		s.off += int64(m)
		return m, err
	}
	k := min(len(s.data), p.raw)
	if err := encodeMapped(dst, s.data[:k]); err != nil {
		return 0, err
	}
	s.data = s.data[k:]
	return k, nil
}

// mapNext maps the next k bytes of the file.
func (s *fileSource) mapNext(k int64) error {
	skew := s.off % int64(os.Getpagesize())
	m, err := mapFile(s.f, s.off-skew, int(skew+k))
	if err != nil {
		return err
	}
	s.m, s.data = m, m[skew:]
	s.off += k
	return nil
}

func (s *fileSource) close() {
	if s.m != nil {
		unmapFile(s.m)
		s.m, s.data = nil, nil
	}
}

// encodeMapped encodes src, read from a file mapping, into dst. Should the
// file shrink under the mapping, the access faults; that fault comes back
// as ErrFileChanged instead of killing the process.
func encodeMapped(dst, src []byte) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			if _, fault := r.(interface{ Addr() uintptr }); !fault {
				panic(r)
			}
			err = ErrFileChanged
		}
	}()
	codec.StdEncoding.Encode(dst, src)
	return nil
}
