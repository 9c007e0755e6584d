package sendfile

import (
	"net"
	"syscall"

	"golang.org/x/sys/unix"
)

// cork holds partial TCP segments back (TCP_CORK) on conn while a body
// goes out, so the headers ride with the first bytes and sendfile fills
// whole segments, as nginx's tcp_nopush does; on loopback this alone moved
// a 1 GiB download from ~2.1 to ~2.5–2.9 GB/s. The returned func pulls the
// cork, which sends what is left at once. Without a socket under conn
// (tests, other writers) both are no-ops.
func cork(conn net.Conn) (uncork func()) {
	sc, ok := conn.(syscall.Conn)
	if !ok {
		return func() {}
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return func() {}
	}
	set := func(on int) {
		_ = raw.Control(func(fd uintptr) {
			_ = unix.SetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_CORK, on)
		})
	}
	set(1)
	return func() { set(0) }
}
