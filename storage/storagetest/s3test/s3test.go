package s3test

import (
	"crypto/rand"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// BinEnv names the environment variable that overrides the SeaweedFS
// binary.
const BinEnv = "MCPBLOB_WEED_BIN"

// Timeouts of start-up and of the graceful part of Stop. The node's data is
// thrown away, and SeaweedFS often takes more than 10 s to act on SIGTERM,
// so Stop waits only briefly before SIGKILL.
const (
	readyTimeout = 90 * time.Second
	stopGrace    = 2 * time.Second
)

// Server is a running SeaweedFS node.
type Server struct {
	Endpoint  string // host:port of the S3 API, plain HTTP
	AccessKey string
	SecretKey string

	ports ports
	dir   string // temporary folder: data/, weed.log and the local sockets
	cmd   *exec.Cmd
	exit  chan struct{} // closed when the process has exited
}

// PID returns the node's process id (the leader of its process group).
func (s *Server) PID() int { return s.cmd.Process.Pid }

// Binary returns the path of the SeaweedFS binary: $MCPBLOB_WEED_BIN, else
// .tools/bin/weed in the repository (the folder holding go.mod, found by
// walking up from the working directory).
func Binary() (string, error) {
	if bin := os.Getenv(BinEnv); bin != "" {
		if _, err := os.Stat(bin); err != nil {
			return "", fmt.Errorf("s3test: %s=%s: %w", BinEnv, bin, err)
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
			return "", errors.New("s3test: no go.mod above the working directory; set " + BinEnv)
		}
		dir = parent
	}
	bin := filepath.Join(dir, ".tools", "bin", "weed")
	if _, err := os.Stat(bin); err != nil {
		return "", fmt.Errorf("s3test: SeaweedFS binary not found at %s: run `make tools` to build it (or set %s)", bin, BinEnv)
	}
	return bin, nil
}

// Start starts a SeaweedFS node on free loopback ports and waits until it
// is ready.
func Start() (*Server, error) {
	bin, err := Binary()
	if err != nil {
		return nil, err
	}
	var errs []error
	// Another process can take a port between our probe and the node's bind.
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
	p, err := freePorts()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "mcpblob-weed-")
	if err != nil {
		return nil, err
	}
	s := &Server{
		Endpoint:  net.JoinHostPort(loopback, strconv.Itoa(p.s3)),
		AccessKey: "mcpblob-test",
		SecretKey: rand.Text(),
		ports:     p,
		dir:       dir,
		exit:      make(chan struct{}),
	}
	if err := os.Mkdir(filepath.Join(dir, "data"), 0o700); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	if err := s.launch(bin); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	if err := s.waitReady(readyTimeout); err != nil {
		s.Stop()
		return nil, err
	}
	return s, nil
}

// launch starts the process, its output going to weed.log.
func (s *Server) launch(bin string) error {
	logf, err := os.Create(filepath.Join(s.dir, "weed.log"))
	if err != nil {
		return err
	}
	defer logf.Close()
	s.cmd = exec.Command(bin, s.args()...)
	s.cmd.Dir = s.dir // no master.toml or filer.toml of the caller's folder applies
	s.cmd.Env = s.env()
	s.cmd.Stdout = logf
	s.cmd.Stderr = logf
	s.cmd.SysProcAttr = sysProcAttr()
	if err := s.cmd.Start(); err != nil {
		return fmt.Errorf("s3test: start %s: %w", bin, err)
	}
	go func() {
		s.cmd.Wait()
		close(s.exit)
	}()
	return nil
}

// args is the node's command line: every listener on 127.0.0.1 at a port
// picked here, the optional ones off.
func (s *Server) args() []string {
	p := s.ports
	data := filepath.Join(s.dir, "data")
	port := func(n int) string { return strconv.Itoa(n) }
	return []string{
		"-logtostderr", // glog would write files to $TMPDIR
		"server",
		"-ip=" + loopback, "-ip.bind=" + loopback,
		"-dir=" + data,
		"-metricsPort=0", "-debug=false",
		"-master.port=" + port(p.master), "-master.port.grpc=" + port(p.masterGRPC),
		"-master.telemetry=false",
		"-master.volumeSizeLimitMB=64", // many small volumes: each bucket is a collection
		"-volume.port=" + port(p.volume), "-volume.port.grpc=" + port(p.volumeGRPC),
		"-volume.max=1000", "-volume.preStopSeconds=0",
		"-filer.port=" + port(p.filer), "-filer.port.grpc=" + port(p.filerGRPC),
		"-filer.localSocket=" + filepath.Join(s.dir, "filer.sock"),
		"-s3", "-s3.port=" + port(p.s3), "-s3.port.grpc=" + port(p.s3GRPC),
		"-s3.port.iceberg=0", "-s3.port.lance=0",
		"-s3.localSocket=" + filepath.Join(s.dir, "s3.sock"),
	}
}

// env is the test binary's environment without the variables that would
// change the node (SeaweedFS's WEED_*, credentials, Sentry's DSN), plus the
// node's credentials and one new volume per collection at a time (the
// default grows seven for every bucket).
func (s *Server) env() []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "WEED_") || strings.HasPrefix(name, "AWS_") || strings.HasPrefix(name, "SENTRY_") {
			continue
		}
		env = append(env, kv)
	}
	return append(env,
		"AWS_ACCESS_KEY_ID="+s.AccessKey,
		"AWS_SECRET_ACCESS_KEY="+s.SecretKey,
		"WEED_MASTER_VOLUME_GROWTH_COPY_1=1",
	)
}

// logTail returns the end of the node's log, for error messages.
func (s *Server) logTail() string {
	b, _ := os.ReadFile(filepath.Join(s.dir, "weed.log"))
	const max = 4000
	if len(b) > max {
		b = b[len(b)-max:]
	}
	return strings.TrimSpace(string(b))
}

// Stop stops the node's process group (SIGTERM, then SIGKILL after 2 s),
// waits for the node to exit and removes its data and sockets.
func (s *Server) Stop() error {
	if s.cmd.Process != nil {
		signalGroup(s.cmd.Process, syscall.SIGTERM)
		select {
		case <-s.exit:
		case <-time.After(stopGrace):
			signalGroup(s.cmd.Process, syscall.SIGKILL)
			<-s.exit
		}
		// Whatever the node started in its group goes with it.
		signalGroup(s.cmd.Process, syscall.SIGKILL)
	}
	for _, sock := range s.grpcSockets() {
		os.Remove(sock)
	}
	return os.RemoveAll(s.dir)
}

// grpcSockets are the Unix sockets the node serves its gRPC services on
// besides their ports. SeaweedFS names them itself, in /tmp, and leaves
// them behind when it exits.
func (s *Server) grpcSockets() []string {
	p := s.ports
	var socks []string
	for name, port := range map[string]int{"master": p.masterGRPC, "volume": p.volumeGRPC, "filer": p.filerGRPC, "s3": p.s3GRPC} {
		socks = append(socks, "/tmp/seaweedfs-"+name+"-grpc-"+strconv.Itoa(port)+".sock")
	}
	return socks
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
//	func TestMain(m *testing.M) { s3test.Main(m) }
func Main(m *testing.M) {
	code := m.Run()
	shared.mu.Lock()
	if shared.srv != nil {
		if err := shared.srv.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "s3test: stop:", err)
		}
	}
	shared.mu.Unlock()
	os.Exit(code)
}

var buckets atomic.Int64

// BucketName returns a new bucket name that starts with prefix (lower-case
// letters and digits): unique in the test binary and random across runs.
func BucketName(prefix string) string {
	return prefix + strings.ToLower(rand.Text()[:10]) + "-" + strconv.FormatInt(buckets.Add(1), 10)
}
