// Package proc starts the servers a benchmark or load test drives, waits
// until they answer, and stops them (SIGTERM, then SIGKILL).
package proc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// Proc is a started server process.
type Proc struct {
	Name string
	Cmd  *exec.Cmd
	done chan struct{}
	logs lockedBuffer
}

// PID is the process id of the server.
func (p *Proc) PID() int { return p.Cmd.Process.Pid }

// Logs returns what the process wrote to stdout and stderr so far.
func (p *Proc) Logs() string { return p.logs.String() }

// Exited reports whether the process has exited.
func (p *Proc) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Start runs bin with args (and extra environment) and waits until GET of
// readyURL answers 200, or readyURL is a host:port that accepts TCP when it
// has no scheme.
func Start(name, readyURL, bin string, args []string, env ...string) (*Proc, error) {
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	return StartCmd(name, readyURL, cmd)
}

// StartCmd is Start for a command the caller has set up: its environment,
// and its output, which Logs keeps only where cmd.Stdout or cmd.Stderr is
// nil.
func StartCmd(name, readyURL string, cmd *exec.Cmd) (*Proc, error) {
	p := &Proc{Name: name, Cmd: cmd, done: make(chan struct{})}
	if cmd.Stdout == nil {
		cmd.Stdout = &p.logs
	}
	if cmd.Stderr == nil {
		cmd.Stderr = &p.logs
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("proc: start %s: %w", name, err)
	}
	go func() { cmd.Wait(); close(p.done) }()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if ready(readyURL) {
			return p, nil
		}
		select {
		case <-p.done:
			return nil, fmt.Errorf("proc: %s exited early (%s):\n%s", name, cmd.ProcessState, p.Logs())
		case <-time.After(50 * time.Millisecond):
		}
	}
	p.Stop()
	return nil, fmt.Errorf("proc: %s not ready after 30s:\n%s", name, p.Logs())
}

func ready(u string) bool {
	if len(u) > 4 && u[:4] == "http" {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}
	c, err := net.DialTimeout("tcp", u, time.Second)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

// Stop sends SIGTERM, waits up to 10 s, then kills the process.
func (p *Proc) Stop() { p.StopWithin(10 * time.Second) }

// StopWithin sends SIGTERM, waits up to grace, then kills the process.
func (p *Proc) StopWithin(grace time.Duration) {
	if p == nil || p.Exited() {
		return
	}
	p.Cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(grace):
		p.Cmd.Process.Kill()
		<-p.done
	}
}

// Kill sends SIGKILL and waits until the process is reaped.
func (p *Proc) Kill() error {
	if p == nil || p.Exited() {
		return nil
	}
	err := p.Cmd.Process.Kill()
	<-p.done
	return err
}

// FreeAddr returns a free loopback host:port.
func FreeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// GoBuild builds pkg (run in dir) into out.
func GoBuild(dir, out, pkg string) error {
	cmd := exec.Command("go", "build", "-o", out, pkg)
	cmd.Dir = dir
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("proc: go build %s: %w\n%s", pkg, err, b)
	}
	return nil
}

// ErrNotFound is returned by LookPath wrappers when a tool is missing.
var ErrNotFound = errors.New("proc: tool not found")

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.b.Len() > 1<<20 { // keep the head; a benchmark log is never read in full
		return len(p), nil
	}
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// ExportHEAD writes the committed tree of HEAD of the repository at root
// into dir (git archive | tar), so a build there ignores uncommitted edits.
func ExportHEAD(root, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	cmd := exec.Command("sh", "-c", "git archive --format=tar HEAD | tar -x -C '"+dir+"'")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("proc: git archive HEAD: %w\n%s", err, out)
	}
	return nil
}
