//go:build unix

package s3test

import (
	"os"
	"syscall"
)

// signalGroup sends sig to the node's process group (its PID: sysProcAttr
// made it the group's leader).
func signalGroup(p *os.Process, sig syscall.Signal) error { return syscall.Kill(-p.Pid, sig) }
