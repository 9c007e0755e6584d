//go:build !unix

package h1

import (
	"io"
	"net"
)

// peeker cannot look at the socket here: the retry of a replayable request
// covers a connection the upstream closed.
type peeker struct{}

func newPeeker(net.Conn) *peeker { return nil }

func (*peeker) alive() bool { return true }

func (*peeker) canJoin() bool { return false }

func (*peeker) sendAwaiting([]byte) (int, error, error) { return 0, nil, nil }

func (*peeker) read([]byte) (int, error) { return 0, io.EOF }
