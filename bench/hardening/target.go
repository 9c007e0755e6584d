package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
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

	mu     sync.Mutex
	cmd    *exec.Cmd
	done   chan struct{}
	starts int
}

func (t *target) base() string { return "http://" + t.addr }

// start starts the process and waits until /readyz answers 200.
func (t *target) start() error {
	f, err := os.OpenFile(t.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	cmd := exec.Command(t.bin, t.args...)
	cmd.Env = append(cleanEnviron(), t.env...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		f.Close()
		return fmt.Errorf("start mcpblob: %w", err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); f.Close(); close(done) }()
	t.mu.Lock()
	t.cmd, t.done = cmd, done
	t.starts++
	t.mu.Unlock()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if t.ready() {
			return nil
		}
		select {
		case <-done:
			return fmt.Errorf("mcpblob exited at start (%s); log: %s", cmd.ProcessState, t.logPath)
		case <-time.After(50 * time.Millisecond):
		}
	}
	t.stop()
	return fmt.Errorf("mcpblob not ready after 30s; log: %s", t.logPath)
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

func (t *target) ready() bool {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, t.base()+"/readyz", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// alive reports whether the current process is running.
func (t *target) alive() bool {
	t.mu.Lock()
	done := t.done
	t.mu.Unlock()
	select {
	case <-done:
		return false
	default:
		return true
	}
}

// pid is the current process's id (0 before the first start).
func (t *target) pid() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.cmd == nil || t.cmd.Process == nil {
		return 0
	}
	return t.cmd.Process.Pid
}

// exitState describes how the last process ended.
func (t *target) exitState() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.cmd == nil || t.cmd.ProcessState == nil {
		return "running"
	}
	return t.cmd.ProcessState.String()
}

// stop sends SIGTERM to the process it started (by PID), waits up to 10 s,
// then kills it.
func (t *target) stop() {
	t.mu.Lock()
	cmd, done := t.cmd, t.done
	t.mu.Unlock()
	if cmd == nil || !t.alive() {
		return
	}
	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		<-done
	}
}
