//go:build unix

package h1

import (
	"errors"
	"io"
	"net"
	"os"
	"syscall"
	"unsafe"
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
	// sendAwaiting's state, and its function made once as fn is.
	sendFn func(fd uintptr) bool
	out    []byte
	sent   int
	werr   error
	joined int // the sends joined to the wait so far (tests)
	// read's state, and its function made once as fn is.
	readFn func(fd uintptr) bool
	in     []byte
	got    int
	rerr   error
	raws   int // the reads so far (tests)
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
	p.sendFn = p.send
	p.readFn = p.readRaw
	return p
}

// read reads from the socket into b as net.Conn's Read would (waiting in
// Go's poller, within the read deadline), but with a raw system call: one
// that does not enter the scheduler's syscall state, which on a process
// that was idle wakes the runtime's monitor thread (sysmon), which then
// polls every 20 µs until the process is idle again, each time a context
// switch on the CPU the gateway runs on. The socket is non-blocking, so
// the call never blocks; the answer's read is the first system call after
// the wait for the upstream, and the monitor stays asleep until the
// client's answer is written.
func (p *peeker) read(b []byte) (int, error) {
	p.in, p.got, p.rerr = b, 0, nil
	err := p.rc.Read(p.readFn)
	n, rerr := p.got, p.rerr
	p.in = nil
	p.raws++
	switch {
	case err != nil:
		return 0, err
	case rerr != nil:
		return 0, os.NewSyscallError("read", rerr)
	case n == 0 && len(b) > 0:
		return 0, io.EOF
	}
	return n, nil
}

// readRaw is read's function: false (wait) while the socket is empty.
func (p *peeker) readRaw(fd uintptr) bool {
	for {
		n, _, errno := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(unsafe.SliceData(p.in))), uintptr(len(p.in)))
		switch errno {
		case 0:
			p.got = int(n)
			return true
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
			return false
		}
		p.rerr = errno
		return true
	}
}

// canJoin reports whether sendAwaiting can be used on the connection.
func (p *peeker) canJoin() bool { return p != nil && p.err == nil }

// sendAwaiting writes b on the socket and then waits until the socket can
// be read (the answer, its end, or an error), in one round of Go's poller:
// the poller's readiness is reset before the write, so the read that
// follows finds the answer where a read right after the write would have
// found the socket empty (one read system call fewer per request, the
// empty one). It returns the bytes written: all of b, or fewer when the
// socket took part of it (EAGAIN), for the caller to write the rest its
// own way with no wait. werr is the write's error; waitErr the wait's (a
// read deadline passed, the connection closed), once b went out whole.
func (p *peeker) sendAwaiting(b []byte) (n int, werr, waitErr error) {
	p.out, p.sent, p.werr = b, 0, nil
	waitErr = p.rc.Read(p.sendFn)
	n, werr = p.sent, p.werr
	p.out = nil
	switch {
	case werr != nil || n < len(b):
		return n, werr, nil
	case waitErr != nil:
		return n, nil, waitErr
	}
	p.joined++
	return n, nil, nil
}

// send is sendAwaiting's function: the first call writes (and returns
// false, to wait, once all is written), the next reports the socket
// readable.
func (p *peeker) send(fd uintptr) bool {
	if p.out == nil {
		return true // called again after the wait: readable
	}
	for p.sent < len(p.out) {
		k, err := syscall.Write(int(fd), p.out[p.sent:])
		switch {
		case errors.Is(err, syscall.EINTR):
			continue
		case errors.Is(err, syscall.EAGAIN):
			return true // the caller writes the rest
		case err != nil:
			p.werr = err
			return true
		case k <= 0:
			p.werr = io.ErrShortWrite
			return true
		}
		p.sent += k
	}
	p.out = nil
	return false
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
