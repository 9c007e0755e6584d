package main

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"

	"github.com/mcpblob/mcpblob/loadtest/rig/proc"
)

// target is the mcpblob process under test: how to start it (again, after
// a crash) and where its logs go. Stdout and stderr are appended to
// logPath in full (the secrets check reads every byte it wrote).
type target struct {
	name    string // "local" or "S3"
	bin     string
	args    []string
	env     []string
	addr    string // 127.0.0.1:port
	logPath string

	mu sync.Mutex
	p  *proc.Proc // the current process; nil before it started or after a failed start
}

func (t *target) base() string { return "http://" + t.addr }

// start starts the process and waits until /readyz answers 200.
func (t *target) start() error {
	f, err := os.OpenFile(t.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer f.Close() // the process writes to its own copy of the descriptor
	cmd := exec.Command(t.bin, t.args...)
	cmd.Env = append(cleanEnviron(), t.env...)
	cmd.Stdout, cmd.Stderr = f, f
	p, err := proc.StartCmd("mcpblob", t.base()+"/readyz", cmd)
	t.mu.Lock()
	t.p = p
	t.mu.Unlock()
	if err != nil {
		return fmt.Errorf("%w (log: %s)", err, t.logPath)
	}
	return nil
}

// cleanEnviron is the environment without MCPBLOB_ variables, so the
// caller's settings do not change the server under test.
func cleanEnviron() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "MCPBLOB_") {
			env = append(env, kv)
		}
	}
	return env
}

// current is the current process (nil before it started).
func (t *target) current() *proc.Proc {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.p
}

// alive reports whether the current process is running.
func (t *target) alive() bool {
	p := t.current()
	return p != nil && !p.Exited()
}

// pid is the current process's id (0 before the first start).
func (t *target) pid() int {
	if p := t.current(); p != nil {
		return p.PID()
	}
	return 0
}

// exitState describes how the last process ended.
func (t *target) exitState() string {
	p := t.current()
	if p == nil || !p.Exited() {
		return "running"
	}
	return p.Cmd.ProcessState.String()
}

// stop sends SIGTERM to the process it started (by PID), waits up to 10 s,
// then kills it.
func (t *target) stop() { t.current().Stop() }
