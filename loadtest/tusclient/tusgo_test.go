package tusclient

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bdragon300/tusgo"

	"github.com/mcpblob/mcpblob/loadtest/rig/proc"
)

const (
	fileSize  = 64 << 20
	chunkSize = 8 << 20
	cutAt     = 20 << 20 // bytes through the proxy when it cuts the connection
	killAt    = 44 << 20 // … when it SIGKILLs and restarts the server, then cuts
)

// server is one `mcpblob serve` on the local store, restartable on the
// same address and data folder.
type server struct {
	bin, addr  string
	args       []string
	mu         sync.Mutex // held while the server is killed and restarted
	proc       *proc.Proc
	killed     int
	restartErr error
}

func (s *server) start() error {
	p, err := proc.Start("mcpblob", "http://"+s.addr+"/readyz", s.bin, s.args)
	if err == nil {
		s.proc = p
	}
	return err
}

// killAndRestart SIGKILLs the server and starts it again.
func (s *server) killAndRestart() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.killed = s.proc.PID()
	if err := s.proc.Kill(); err != nil {
		s.restartErr = err
		return
	}
	s.restartErr = s.start()
}

// startServer builds mcpblob and serves a fresh data folder with one API key.
func startServer(t *testing.T, apiKey string) *server {
	t.Helper()
	dir := t.TempDir()
	bin := filepath.Join(dir, "mcpblob")
	if err := proc.GoBuild("../..", bin, "./cmd/mcpblob"); err != nil {
		t.Fatal(err)
	}
	digest := sha256.Sum256([]byte(apiKey))
	keys := filepath.Join(dir, "api-keys")
	if err := os.WriteFile(keys, []byte(hex.EncodeToString(digest[:])+" tusgo\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	addr, err := proc.FreeAddr()
	if err != nil {
		t.Fatal(err)
	}
	s := &server{bin: bin, addr: addr,
		args: []string{"serve", "--listen", addr, "--data", filepath.Join(dir, "data"), "--auth-keys", keys}}
	if err := s.start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.proc.Stop()
	})
	return s
}

// cutProxy relays loopback TCP connections to the server and counts the
// bytes clients send; when the count passes cutAt it closes the
// connection, and when it passes killAt it kills and restarts the server
// first.
type cutProxy struct {
	ln     net.Listener
	srv    *server
	mu     sync.Mutex
	sent   int64
	passed int // thresholds passed: 0, 1 (cut), 2 (kill)
}

func startProxy(t *testing.T, srv *server) *cutProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &cutProxy{ln: ln, srv: srv}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go p.relay(c)
		}
	}()
	return p
}

func (p *cutProxy) relay(c net.Conn) {
	defer c.Close()
	s, err := net.Dial("tcp", p.srv.addr)
	if err != nil {
		return
	}
	defer s.Close()
	go func() { io.Copy(c, s); c.Close() }()
	buf := make([]byte, 32<<10)
	for {
		n, err := c.Read(buf)
		if n > 0 {
			if _, werr := s.Write(buf[:n]); werr != nil || p.count(n) {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// count adds n sent bytes and reports whether the connection is to be cut.
func (p *cutProxy) count(n int) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.sent += int64(n)
	switch {
	case p.passed == 0 && p.sent >= cutAt:
		p.passed = 1
		return true
	case p.passed == 1 && p.sent >= killAt:
		p.passed = 2
		p.srv.killAndRestart()
		return true
	}
	return false
}

type bearer string

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+string(b))
	return http.DefaultTransport.RoundTrip(r)
}

// TestTusgoResumes uploads 64 MiB with tusgo in 8 MiB chunks through the
// cutting proxy: the connection cut at 20 MiB, the server SIGKILLed and
// restarted at 44 MiB (bytes through the proxy). After each failure the
// client asks the server's offset (HEAD, tusgo's Sync) and sends the rest
// from there.
func TestTusgoResumes(t *testing.T) {
	apiKey := "mcpb_" + rand.Text()
	srv := startServer(t, apiKey)
	px := startProxy(t, srv)
	httpc := &http.Client{Transport: bearer(apiKey)}
	base, _ := url.Parse("http://" + px.ln.Addr().String() + "/v1/tus/")
	cl := tusgo.NewClient(httpc, base)

	path := filepath.Join(t.TempDir(), "source")
	want := writeSource(t, path, fileSize)
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()

	const key = "tusgo/resumed.bin"
	var u tusgo.Upload
	if _, err := cl.CreateUpload(&u, fileSize, false, map[string]string{"key": key, "filename": "resumed.bin"}); err != nil {
		t.Fatalf("create: %v", err)
	}
	stream := tusgo.NewUploadStream(cl, &u)
	stream.ChunkSize = chunkSize
	interruptions := upload(t, stream, f)
	px.mu.Lock()
	passed := px.passed
	px.mu.Unlock()
	srv.mu.Lock()
	killed, restartErr := srv.killed, srv.restartErr
	srv.mu.Unlock()

	// A resumed PATCH can fail once more: when the HEAD came before the cut
	// PATCH committed what had arrived, the server answers 409 (tus-js-client
	// and tusgo then ask again).
	if interruptions < 2 || passed != 2 {
		t.Errorf("%d interruptions, proxy passed %d thresholds: want the cut and the kill (≥ 2, 2)", interruptions, passed)
	}
	if killed == 0 || restartErr != nil {
		t.Errorf("server killed (pid %d) and restarted: %v", killed, restartErr)
	}
	got, size := blobSum(t, httpc, "http://"+srv.addr+"/v1/blobs/"+key)
	if size != fileSize || got != want {
		t.Errorf("stored blob: %d bytes, sha256 %s; want %d bytes, sha256 %s", size, got, fileSize, want)
	}
}

// upload sends f through stream, resuming after each failure from the
// server's offset, which must be at or past what the server acknowledged
// (tusgo's offset after the last 204) and at most one chunk further. It
// returns the number of failures.
func upload(t *testing.T, stream *tusgo.UploadStream, f *os.File) int {
	t.Helper()
	failures := 0
	for attempt := 0; ; attempt++ {
		if attempt > 0 {
			acked := stream.Tell()
			held := syncOffset(t, stream)
			t.Logf("failure %d: acknowledged %d, server holds %d: resuming there", failures, acked, held)
			if held < acked || held > acked+chunkSize {
				t.Errorf("server offset %d after failure %d: want between the acknowledged %d and one chunk more", held, failures, acked)
			}
			stream.ForceClean()
			if _, err := f.Seek(held, io.SeekStart); err != nil {
				t.Fatal(err)
			}
		}
		err := readFrom(stream, f)
		if err == nil {
			return failures
		}
		failures++
		t.Logf("attempt %d: %v", attempt, err)
		if failures > 6 {
			t.Fatalf("gave up after %d failures: %v", failures, err)
		}
	}
}

// syncOffset asks the server for the upload's offset (HEAD), as a client
// does after a failure: a few times, 200 ms apart, while the server
// restarts.
func syncOffset(t *testing.T, stream *tusgo.UploadStream) int64 {
	t.Helper()
	var err error
	for range 25 {
		if _, err = stream.Sync(); err == nil {
			return stream.Tell()
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("HEAD of the upload: %v", err)
	return 0
}

// readFrom is stream.ReadFrom(f) with tusgo v0.1.2's panic on an error
// answer whose body is shorter than 256 bytes (TusError.WithResponse reads
// 256 bytes with io.ReadFull and panics on io.ErrUnexpectedEOF) turned
// into an error. The 409 that a resumed PATCH gets when the cut PATCH
// committed after the HEAD is such an answer.
func readFrom(stream *tusgo.UploadStream, f *os.File) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("tusgo panicked reading an error answer (http %d): %v", lastStatus(stream), p)
		}
	}()
	_, err = stream.ReadFrom(f)
	return err
}

func lastStatus(stream *tusgo.UploadStream) int {
	if stream.LastResponse == nil {
		return 0
	}
	return stream.LastResponse.StatusCode
}

// writeSource writes size deterministic pseudo-random bytes to path and
// returns their sha256.
func writeSource(t *testing.T, path string, size int) string {
	t.Helper()
	var seed [32]byte
	binary.LittleEndian.PutUint64(seed[:], 27)
	src := mrand.NewChaCha8(seed)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(io.MultiWriter(f, h), io.LimitReader(src, int64(size))); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// blobSum GETs a blob and returns its sha256 and size.
func blobSum(t *testing.T, c *http.Client, u string) (string, int64) {
	t.Helper()
	resp, err := c.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("GET %s: http %d: %s", u, resp.StatusCode, strings.TrimSpace(string(b)))
	}
	h := sha256.New()
	n, err := io.Copy(h, resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%x", h.Sum(nil)), n
}
