//go:build unix

package h1

import (
	"errors"
	"net"
	"syscall"
)

// peeker looks at an idle connection without taking anything from it: its
// syscall.RawConn and the function handed to it, made once per connection
// (not on every request that reuses it).
type peeker struct {
	rc    syscall.RawConn
	err   error // the connection gave no RawConn
	fn    func(fd uintptr) bool
	buf   [1]byte
	open  bool
	looks int // the peeks so far (tests)
}

// newPeeker is nc's peeker; nil for a connection that is not a socket.
func newPeeker(nc net.Conn) *peeker {
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return nil
	}
	p := &peeker{}
	p.rc, p.err = sc.SyscallConn()
	p.fn = func(fd uintptr) bool {
		_, _, rerr := syscall.Recvfrom(int(fd), p.buf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		p.open = errors.Is(rerr, syscall.EAGAIN)
		return true
	}
	return p
}

// alive reports whether an idle connection is still open: nothing to
// read on it (an upstream that closed it has sent its end, or a stray
// byte that makes it unusable as well). One non-blocking peek.
func (p *peeker) alive() bool {
	if p == nil {
		return true
	}
	if p.err != nil {
		return false
	}
	p.open = false
	p.looks++
	err := p.rc.Read(p.fn)
	return err == nil && p.open
}
