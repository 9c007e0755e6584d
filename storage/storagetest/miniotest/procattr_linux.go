package miniotest

import "syscall"

// sysProcAttr makes the kernel kill MinIO when the test binary dies, so a
// crashed or timed-out test run leaves no server behind.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
