//go:build !linux

package sendfile

import "net"

// cork is a no-op where TCP_CORK does not exist.
func cork(net.Conn) (uncork func()) { return func() {} }

// drained reports true where TCP_INFO is not read: the body's last byte
// goes out at once.
func drained(net.Conn) bool { return true }
