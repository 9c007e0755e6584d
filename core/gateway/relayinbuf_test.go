package gateway

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/mcpblob/mcpblob/core/gateway/readahead"
)

// chunkyReader hands out its bytes a few at a time, as an event parser's
// reads might.
type chunkyReader struct {
	r *strings.Reader
}

func (c chunkyReader) Read(p []byte) (int, error) {
	return c.r.Read(p[:min(len(p), 7)])
}

// An SSE answer the transport holds whole is read on the caller's
// goroutine: readahead.Start returns with it read to its end, and starts no
// reader (rd.Reads() is never sent on). One larger than a buffer goes on
// through the reader, whole and in order.
func TestSSEInBufferReadHere(t *testing.T) {
	g := newGateway(t, "http://127.0.0.1:1", nil)
	small := "event: message\ndata: " + `{"jsonrpc":"2.0","id":1,"result":{}}` + "\n\n"
	rd := readahead.Start(chunkyReader{strings.NewReader(small)}, true, &copyBuffers)
	if rd.First == nil || !errors.Is(rd.First.Err, io.EOF) || string((*rd.First.Buf)[:rd.First.N]) != small {
		t.Fatalf("readahead.Start of an answer in the buffer: first %+v; want the whole answer with io.EOF", rd.First)
	}
	if !rd.Whole(0) {
		t.Error("an answer read whole is not reported whole")
	}
	var out bytes.Buffer
	if err := g.copySSE(bufFlusher{&out}, rd); err != nil || out.String() != small {
		t.Fatalf("relayed %q, %v; want the answer", out.String(), err)
	}

	big := strings.Repeat("data: "+strings.Repeat("x", 1000)+"\n\n", 100) // over one 32 KiB buffer
	rd = readahead.Start(chunkyReader{strings.NewReader(big)}, true, &copyBuffers)
	if rd.First == nil || rd.First.Err != nil {
		t.Fatalf("readahead.Start of a large answer: first %+v; want a full buffer and no end", rd.First)
	}
	out.Reset()
	if err := g.copySSE(bufFlusher{&out}, rd); err != nil || out.String() != big {
		t.Fatalf("relayed %d bytes, %v; want the %d bytes of the answer", out.Len(), err, len(big))
	}
}

type bufFlusher struct{ *bytes.Buffer }

func (bufFlusher) Flush() error { return nil }
