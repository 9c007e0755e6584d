package oauthtest

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

const (
	readyPrefix  = "mcpblob-testas listening on "
	startTimeout = 20 * time.Second
	stopTimeout  = 5 * time.Second
)

// Options are the server's flags; empty ones keep its defaults.
type Options struct {
	Issuer    string   // issuer path under the listen address, e.g. "/tenant1"
	Users     []string // -user id:username:password (default alice and bob)
	Clients   []string // -client id[:secret]=redirect1,redirect2
	Resources []string // -resource URL; the first is the default audience
	Alg       string   // -alg RS256 (default) or ES256
	NoRFC8414 bool     // -no-rfc8414: OIDC discovery only
	Extra     []string // more flags, e.g. "-user-claim", "alice:org=acme"
}

func (o Options) args() []string {
	args := []string{"-listen", "127.0.0.1:0"}
	add := func(flag string, values ...string) {
		for _, v := range values {
			args = append(args, flag, v)
		}
	}
	if o.Issuer != "" {
		add("-issuer", o.Issuer)
	}
	if o.Alg != "" {
		add("-alg", o.Alg)
	}
	add("-user", o.Users...)
	add("-client", o.Clients...)
	add("-resource", o.Resources...)
	if o.NoRFC8414 {
		args = append(args, "-no-rfc8414")
	}
	return append(args, o.Extra...)
}

// Server is a running mcpblob-testas.
type Server struct {
	Issuer string // as in its metadata and tokens
	root   string // scheme://host: where /test/ lives
	http   *http.Client
}

// Start starts the server and stops it (SIGTERM, then SIGKILL) when the
// test ends.
func Start(t testing.TB, o Options) *Server {
	t.Helper()
	bin := binary(t)
	cmd := exec.Command(bin, o.args()...)
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", bin, err)
	}
	t.Cleanup(func() {
		stop(cmd)
		if t.Failed() {
			t.Logf("mcpblob-testas stderr:\n%s", stderr)
		}
	})
	issuer, err := awaitReady(stdout)
	if err != nil {
		t.Fatalf("mcpblob-testas %s: %v\nstderr:\n%s", strings.Join(o.args(), " "), err, stderr)
	}
	u, err := url.Parse(issuer)
	if err != nil {
		t.Fatal(err)
	}
	return &Server{Issuer: issuer, root: u.Scheme + "://" + u.Host, http: &http.Client{
		Timeout:       10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

// awaitReady reads stdout up to the listening line and returns its issuer;
// the rest of stdout is drained so the server never blocks on it.
func awaitReady(stdout io.Reader) (string, error) {
	ready := make(chan string, 1)
	go func() {
		lines := bufio.NewScanner(stdout)
		for lines.Scan() {
			if issuer, ok := strings.CutPrefix(lines.Text(), readyPrefix); ok {
				ready <- issuer
				break
			}
		}
		close(ready)
		io.Copy(io.Discard, stdout)
	}()
	select {
	case issuer, ok := <-ready:
		if !ok {
			return "", fmt.Errorf("exited before %q", readyPrefix)
		}
		return issuer, nil
	case <-time.After(startTimeout):
		return "", fmt.Errorf("no %q line within %v", readyPrefix, startTimeout)
	}
}

// stop sends SIGTERM to the process, SIGKILL if it has not exited within
// stopTimeout, and reaps it.
func stop(cmd *exec.Cmd) {
	done := make(chan struct{})
	go func() {
		cmd.Wait()
		close(done)
	}()
	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-done:
	case <-time.After(stopTimeout):
		cmd.Process.Kill()
		<-done
	}
}

// binary is $MCPBLOB_TESTAS or <repo root>/.tools/bin/mcpblob-testas.
func binary(t testing.TB) string {
	t.Helper()
	bin := os.Getenv("MCPBLOB_TESTAS")
	if bin == "" {
		root, err := repoRoot()
		if err != nil {
			t.Fatal(err)
		}
		bin = filepath.Join(root, ".tools", "bin", "mcpblob-testas")
	}
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("the test authorization server is missing (%v): run `make tools`, or set MCPBLOB_TESTAS", err)
	}
	return bin
}

// repoRoot walks up from the working directory to the directory whose go.mod
// declares module github.com/mcpblob/mcpblob.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		mod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && declaresModule(mod, "github.com/mcpblob/mcpblob") {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod of github.com/mcpblob/mcpblob above the working directory")
		}
		dir = parent
	}
}

func declaresModule(gomod []byte, module string) bool {
	for _, line := range strings.Split(string(gomod), "\n") {
		if name, ok := strings.CutPrefix(strings.TrimSpace(line), "module "); ok {
			return strings.Trim(strings.TrimSpace(name), `"`) == module
		}
	}
	return false
}

// lockedBuffer collects the server's stderr while tests may read it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
