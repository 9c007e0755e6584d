package linger

import (
	"net"
	"sync/atomic"
	"time"
)

// A lingering close reads what the client still sends until the client
// closes its side, falls silent for Silence, or MaxTime or MaxBytes pass:
// enough for a client to finish writing a refused body of a few MiB and
// read the answer, bounded for one that never stops. At most MaxLingering
// closes linger at once; past that a connection is closed at once.
const (
	MaxTime      = 2 * time.Second
	Silence      = 500 * time.Millisecond
	MaxBytes     = 64 << 20
	MaxLingering = 1024
)

// maxTime and silence are MaxTime and Silence, which tests shorten or
// stretch.
var maxTime, silence = MaxTime, Silence

// discardSize is the read buffer of one lingering close, held only while
// it lasts.
const discardSize = 4 << 10

// lingering counts the closes under way.
var lingering atomic.Int32

// halfCloser is a connection that can send FIN and go on reading
// (*net.TCPConn, *net.UnixConn).
type halfCloser interface{ CloseWrite() error }

// Close closes c. When c can half-close, the close lingers on a goroutine
// of its own and Close returns at once: the client gets FIN (and reads to
// the end of the answer) while what it still sends is read and dropped.
// Otherwise, or past MaxLingering, c is closed at once. No other reader
// of c may be waiting: the caller closes at once instead (see connlimit).
func Close(c net.Conn) {
	if hc, ok := c.(halfCloser); ok && take() {
		if hc.CloseWrite() == nil {
			go discard(c)
			return
		}
		lingering.Add(-1)
	}
	_ = c.Close()
}

// take counts a lingering close in, unless MaxLingering are under way.
func take() bool {
	if lingering.Add(1) <= MaxLingering {
		return true
	}
	lingering.Add(-1)
	return false
}

// discard reads and drops what arrives on half-closed c within the
// bounds, then closes c.
func discard(c net.Conn) {
	defer lingering.Add(-1)
	defer c.Close()
	buf := make([]byte, discardSize)
	end := time.Now().Add(maxTime)
	for n := 0; n < MaxBytes; {
		deadline := time.Now().Add(silence)
		if deadline.After(end) {
			deadline = end
		}
		if c.SetReadDeadline(deadline) != nil {
			return
		}
		k, err := c.Read(buf)
		if n += k; err != nil {
			return // the client closed (EOF), fell silent, or time ran out
		}
	}
}
