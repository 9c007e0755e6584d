//go:build unix

package h1

import (
	"errors"
	"net"
	"syscall"
)

// alive reports whether an idle connection is still open: nothing to
// read on it (an upstream that closed it has sent its end, or a stray
// byte that makes it unusable as well). One non-blocking peek.
func alive(nc net.Conn) bool {
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return true
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	open := false
	err = rc.Read(func(fd uintptr) bool {
		var b [1]byte
		_, _, rerr := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		open = errors.Is(rerr, syscall.EAGAIN)
		return true
	})
	return err == nil && open
}
