package lazybody

import (
	"bytes"
	"io"
	"testing"
	"testing/iotest"
)

func TestReader(t *testing.T) {
	t.Parallel()
	data := bytes.Repeat([]byte("0123456789abcdef"), 3<<16)
	for _, tc := range []struct {
		name  string
		r     io.Reader
		large bool
	}{
		{"fast", bytes.NewReader(data), true},
		{"trickle", iotest.OneByteReader(bytes.NewReader(data[:100<<10])), false},
		{"half", iotest.HalfReader(bytes.NewReader(data)), false}, // no read fills the buffer
	} {
		l := New(tc.r)
		got, err := io.ReadAll(iotest.OneByteReader(struct{ io.Reader }{l}))
		if err != nil || !bytes.HasPrefix(data, got) || len(got) < 100<<10 {
			t.Fatalf("%s: %v, %d bytes", tc.name, err, len(got))
		}
		if l.Large() != tc.large {
			t.Errorf("%s: large buffer taken = %v", tc.name, l.big)
		}
		l.Release()
	}
}
