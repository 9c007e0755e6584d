package blobdecode

import (
	"errors"
	"io"
	"strings"
	"testing"
)

// genReader yields its pieces in turn, each piece.s repeated piece.n
// times, without holding more than one repetition: a body of any size.
type genReader struct {
	pieces []piece
	off    int // in the current repetition
}

type piece struct {
	s string
	n int64
}

func (g *genReader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) && len(g.pieces) > 0 {
		cur := &g.pieces[0]
		if cur.n == 0 {
			g.pieces = g.pieces[1:]
			continue
		}
		k := copy(p[n:], cur.s[g.off:])
		n += k
		if g.off += k; g.off == len(cur.s) {
			g.off = 0
			cur.n--
		}
	}
	if n == 0 {
		return 0, io.EOF
	}
	return n, nil
}

func body(pieces ...piece) io.Reader { return &genReader{pieces: pieces} }
func once(s string) piece            { return piece{s, 1} }

// TestHostileBodiesMemoryFlat: whatever an upstream sends, Decode holds
// no more than its buffers and bounds: bodies of 80 MiB (20 MiB under
// -race or -short; MaxOtherBytes half that) made of one thing repeated end with the
// right outcome and the heap grows by less than 2 MiB.
func TestHostileBodiesMemoryFlat(t *testing.T) {
	mib := int64(80)
	if raceEnabled || testing.Short() {
		mib = 20
	}
	kib := mib << 10 // repetitions of 1 KiB
	k := strings.Repeat("k", 1024)
	note := sseEvent(`{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"` + strings.Repeat("n", 900) + `"}}`)
	var limit *LimitError
	var rpc *RPCError
	isLimit := func(err error) bool { return errors.As(err, &limit) }
	for _, tc := range []struct {
		name  string
		sse   bool
		body  func() io.Reader
		check func(error) bool
	}{
		{"whitespace", false, func() io.Reader { return body(once("{"), piece{strings.Repeat(" ", 1024), kib}) }, isLimit},
		{"long key", false, func() io.Reader { return body(once(`{"`), piece{k, kib}) }, isLimit},
		{"long uri", false, func() io.Reader {
			return body(once(`{"jsonrpc":"2.0","id":1,"result":{"contents":[{"uri":"`), piece{k, kib})
		}, isLimit},
		{"long error message", false, func() io.Reader {
			return body(once(`{"jsonrpc":"2.0","id":1,"error":{"code":-1,"message":"`), piece{k, kib / 4}, once(`"}}`))
		}, func(err error) bool { return errors.As(err, &rpc) && len(rpc.Message) == defaultMaxString }},
		{"endless notifications", true, func() io.Reader { return body(piece{note, kib}) }, isLimit},
		{"long comment line", true, func() io.Reader { return body(once(": "), piece{k, kib}) }, isLimit},
		{"long skipped member", false, func() io.Reader {
			return body(once(`{"jsonrpc":"2.0","id":1,"result":{"_meta":{"x":"`), piece{k, kib / 4}, once(`"},"contents":[{"blob":"eA=="}]}}`))
		}, func(err error) bool { return err == nil }},
		{"long text", false, func() io.Reader {
			return body(once(`{"jsonrpc":"2.0","id":1,"result":{"contents":[{"text":"`), piece{"t\\u00e9\xff" + k, kib}, once(`"}]}}`))
		}, func(err error) bool { return err == nil }},
		{"deep", false, func() io.Reader { return body(once(`{"a":`), piece{"[", kib}) }, isLimit},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctype := jsonType
			if tc.sse {
				ctype = sseType
			}
			mon := startHeapMonitor()
			_, err := Decode(tc.body(), ctype, []byte("1"), io.Discard, Options{MaxOtherBytes: mib << 19})
			growth := mon.Stop()
			if !tc.check(err) {
				t.Fatalf("outcome %v", err)
			}
			t.Logf("%d MiB: heap grew %.2f MiB (%T)", mib, float64(growth)/(1<<20), err)
			if growth > 2<<20 {
				t.Fatalf("heap grew %d bytes", growth)
			}
		})
	}
}

// TestRewriteHostileMemoryFlat: Rewrite copies large items it cannot
// replace (a long text, a long structuredContent) through with a flat
// heap.
func TestRewriteHostileMemoryFlat(t *testing.T) {
	mib := int64(80)
	if raceEnabled || testing.Short() {
		mib = 20
	}
	k := strings.Repeat("k", 1024)
	for name, b := range map[string]func() io.Reader{
		"long text item": func() io.Reader {
			return body(once(`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"`), piece{k, mib << 10}, once(`"}]}}`))
		},
		"long structuredContent": func() io.Reader {
			return body(once(`{"jsonrpc":"2.0","id":1,"result":{"content":[],"structuredContent":{"data":"`), piece{k, mib << 10}, once(`"}}}`))
		},
	} {
		t.Run(name, func(t *testing.T) {
			cw := &countWriter{}
			mon := startHeapMonitor()
			n, err := Rewrite(b(), cw, RewriteOptions{Open: func(Value) (Sink, error) { return nil, errors.New("not expected") }})
			growth := mon.Stop()
			if err != nil || n != 0 || cw.n < mib<<20 {
				t.Fatalf("%d offloaded, %d bytes out, %v", n, cw.n, err)
			}
			if growth > 2<<20 {
				t.Fatalf("heap grew %d bytes", growth)
			}
		})
	}
}

type countWriter struct{ n int64 }

func (c *countWriter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }
