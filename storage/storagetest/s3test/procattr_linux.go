package s3test

import "syscall"

// sysProcAttr puts the node in a process group of its own, stopped as one,
// and makes the kernel kill it when the test binary dies, so a crashed or
// timed-out test run leaves no server behind.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
