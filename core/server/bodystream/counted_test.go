package bodystream

import (
	"bufio"
	"errors"
	"io"
	"testing"

	"github.com/mcpblob/mcpblob/core/mcp"
)

// brokenConn accepts limit bytes, then fails every write.
type brokenConn struct{ limit, got int }

var errBroken = errors.New("connection reset")

func (c *brokenConn) Write(p []byte) (int, error) {
	n := min(len(p), c.limit-c.got)
	c.got += n
	if n < len(p) {
		return n, errBroken
	}
	return n, nil
}

// TestCountedFailedWrite: a body whose connection fails part way reports,
// once and at Close, what the connection took, not what the body wrote into
// the write buffer.
func TestCountedFailedWrite(t *testing.T) {
	conn := &brokenConn{limit: 10000}
	bw := bufio.NewWriterSize(conn, 4096)
	body := Count(New(func(w mcp.StreamWriter) error {
		for range 64 { // through the buffer: some of it is held there when the connection fails
			if _, err := w.Write(make([]byte, 1000)); err != nil {
				return err
			}
		}
		return nil
	}, nil, 0))
	var reports []int64
	body.OnFinish(func(sent int64) { reports = append(reports, sent) })
	if _, err := body.WriteTo(bw); !errors.Is(err, errBroken) {
		t.Fatalf("WriteTo: %v, want the connection's error", err)
	}
	if len(reports) != 0 {
		t.Fatalf("reported %v before Close", reports)
	}
	body.Close()
	body.Close()
	if len(reports) != 1 || reports[0] != int64(conn.got) {
		t.Errorf("reports %v; want one: the %d bytes the connection took (%d were still buffered)", reports, conn.got, bw.Buffered())
	}
}

// TestCountedDropped: a body dropped unsent reports 0, also to an OnFinish
// registered after the drop.
func TestCountedDropped(t *testing.T) {
	body := Count(New(func(w mcp.StreamWriter) error { _, err := io.WriteString(w, "x"); return err }, nil, 0))
	body.Close()
	got := int64(-1)
	body.OnFinish(func(sent int64) { got = sent })
	if got != 0 {
		t.Errorf("a dropped body reported %d, want 0", got)
	}
}
