package storagetest

import (
	"encoding/binary"
	"io"
	"math/rand/v2"
)

// blockSize is the period of a Stream's base block.
const blockSize = 1 << 20

// Stream is a deterministic pseudo-random byte sequence of a fixed size,
// cheap to produce at any offset (several GB/s), so that tests can move
// gigabytes without storing them. Block i of a stream is a 1 MiB base block,
// drawn from ChaCha8 with the stream's seed, XORed with a word derived from
// i; no two blocks are alike.
type Stream struct {
	size  int64
	off   int64
	base  []byte
	block []byte // the bytes of block cur
	cur   int64
}

// NewStream returns the stream of size bytes for seed, positioned at 0.
func NewStream(seed uint64, size int64) *Stream {
	var key [32]byte
	binary.LittleEndian.PutUint64(key[:], seed)
	base := make([]byte, blockSize)
	rand.NewChaCha8(key).Read(base)
	return &Stream{size: size, base: base, block: make([]byte, blockSize), cur: -1}
}

// Bytes returns the n bytes of seed's stream at offset off.
func Bytes(seed uint64, off, n int64) []byte {
	s := NewStream(seed, off+n)
	b := make([]byte, n)
	s.ReadAt(b, off)
	return b
}

// Size returns the stream's length.
func (s *Stream) Size() int64 { return s.size }

// Read implements io.Reader.
func (s *Stream) Read(p []byte) (int, error) {
	n, err := s.ReadAt(p, s.off)
	s.off += int64(n)
	return n, err
}

// ReadAt implements io.ReaderAt. It is not safe for concurrent use.
func (s *Stream) ReadAt(p []byte, off int64) (int, error) {
	if off >= s.size {
		return 0, io.EOF
	}
	var err error
	if rest := s.size - off; int64(len(p)) >= rest {
		p, err = p[:rest], io.EOF
	}
	n := 0
	for n < len(p) {
		i := (off + int64(n)) / blockSize
		s.load(i)
		n += copy(p[n:], s.block[(off+int64(n))%blockSize:])
	}
	return n, err
}

// load fills s.block with block i.
func (s *Stream) load(i int64) {
	if s.cur == i {
		return
	}
	mask := uint64(i+1) * 0x9E3779B97F4A7C15
	for j := 0; j < blockSize; j += 8 {
		binary.LittleEndian.PutUint64(s.block[j:], binary.LittleEndian.Uint64(s.base[j:])^mask)
	}
	s.cur = i
}
