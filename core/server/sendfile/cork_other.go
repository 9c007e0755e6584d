//go:build !linux

package sendfile

import "net"

// cork is a no-op where TCP_CORK does not exist.
func cork(net.Conn) (uncork func()) { return func() {} }
