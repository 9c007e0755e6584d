package miniotest

import (
	"crypto/rand"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// BinEnv names the environment variable that overrides the MinIO binary.
const BinEnv = "MCPBLOB_MINIO_BIN"

// Server is a running MinIO server.
type Server struct {
	Endpoint  string // host:port of the S3 API, plain HTTP
	AccessKey string
	SecretKey string

	dir  string // temporary folder: data/ and minio.log
	cmd  *exec.Cmd
	exit chan struct{} // closed when the process has exited
}

// Binary returns the path of the MinIO binary: $MCPBLOB_MINIO_BIN, else
// .tools/bin/minio in the repository (the folder holding go.mod, found by
// walking up from the working directory).
func Binary() (string, error) {
	if bin := os.Getenv(BinEnv); bin != "" {
		if _, err := os.Stat(bin); err != nil {
			return "", fmt.Errorf("miniotest: %s=%s: %w", BinEnv, bin, err)
		}
		return bin, nil
	}
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("miniotest: no go.mod above the working directory; set " + BinEnv)
		}
		dir = parent
	}
	bin := filepath.Join(dir, ".tools", "bin", "minio")
	if _, err := os.Stat(bin); err != nil {
		return "", fmt.Errorf("miniotest: MinIO binary not found at %s: run `make tools` to build it (or set %s)", bin, BinEnv)
	}
	return bin, nil
}

// Start starts a MinIO server on a free loopback port and waits until it is
// ready.
func Start() (*Server, error) {
	bin, err := Binary()
	if err != nil {
		return nil, err
	}
	var errs []error
	// Another process can take the port between our probe and MinIO's bind.
	for range 3 {
		s, err := start(bin)
		if err == nil {
			return s, nil
		}
		errs = append(errs, err)
	}
	return nil, errors.Join(errs...)
}

func start(bin string) (*Server, error) {
	api, err := freePort()
	if err != nil {
		return nil, err
	}
	console, err := freePort()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "mcpblob-minio-")
	if err != nil {
		return nil, err
	}
	s := &Server{
		Endpoint:  api,
		AccessKey: "mcpblob-test",
		SecretKey: rand.Text(),
		dir:       dir,
		exit:      make(chan struct{}),
	}
	logf, err := os.Create(filepath.Join(dir, "minio.log"))
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	defer logf.Close()
	s.cmd = exec.Command(bin, "server", "--address", api, "--console-address", console, filepath.Join(dir, "data"))
	s.cmd.Env = append(os.Environ(),
		"MINIO_ROOT_USER="+s.AccessKey,
		"MINIO_ROOT_PASSWORD="+s.SecretKey,
		"MINIO_BROWSER=off",
		"MINIO_UPDATE=off",
	)
	s.cmd.Stdout = logf
	s.cmd.Stderr = logf
	s.cmd.SysProcAttr = sysProcAttr()
	if err := s.cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("miniotest: start %s: %w", bin, err)
	}
	go func() {
		s.cmd.Wait()
		close(s.exit)
	}()
	if err := s.waitReady(60 * time.Second); err != nil {
		s.Stop()
		return nil, err
	}
	return s, nil
}

// waitReady polls the readiness endpoint until it answers 200.
func (s *Server) waitReady(timeout time.Duration) error {
	client := &http.Client{Timeout: time.Second}
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		select {
		case <-s.exit:
			return fmt.Errorf("miniotest: MinIO exited during start-up (%v):\n%s", s.cmd.ProcessState, s.logTail())
		default:
		}
		resp, err := client.Get("http://" + s.Endpoint + "/minio/health/ready")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("miniotest: MinIO not ready after %v:\n%s", timeout, s.logTail())
}

// logTail returns the end of the server's log, for error messages.
func (s *Server) logTail() string {
	b, _ := os.ReadFile(filepath.Join(s.dir, "minio.log"))
	const max = 4000
	if len(b) > max {
		b = b[len(b)-max:]
	}
	return strings.TrimSpace(string(b))
}

// Stop stops the server (SIGTERM, then SIGKILL after 10 s) and removes its
// data.
func (s *Server) Stop() error {
	if s.cmd.Process != nil {
		s.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-s.exit:
		case <-time.After(10 * time.Second):
			s.cmd.Process.Kill()
			<-s.exit
		}
	}
	return os.RemoveAll(s.dir)
}

// freePort returns a loopback address with a port that was free just now.
func freePort() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

var shared struct {
	mu  sync.Mutex
	srv *Server
	err error
}

// Shared returns the test binary's server, starting it on first use. It
// fails t when the server cannot start (for example, when the binary is
// missing: run `make tools`).
func Shared(t testing.TB) *Server {
	t.Helper()
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.srv == nil && shared.err == nil {
		shared.srv, shared.err = Start()
	}
	if shared.err != nil {
		t.Fatal(shared.err)
	}
	return shared.srv
}

// Main runs the tests and then stops the shared server, if one was started:
//
//	func TestMain(m *testing.M) { miniotest.Main(m) }
func Main(m *testing.M) {
	code := m.Run()
	shared.mu.Lock()
	if shared.srv != nil {
		if err := shared.srv.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "miniotest: stop:", err)
		}
	}
	shared.mu.Unlock()
	os.Exit(code)
}
