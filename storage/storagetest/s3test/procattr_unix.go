//go:build unix && !linux

package s3test

import "syscall"

// sysProcAttr puts the node in a process group of its own, stopped as one.
func sysProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }
