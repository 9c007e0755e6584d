package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer is a bytes.Buffer safe for a child's output and the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// waitFor returns the log once ok holds for it, or as it is after a few
// flush intervals: the server batches its info lines (logFlushInterval).
func (s *syncBuffer) waitFor(ok func(log string) bool) string {
	deadline := time.Now().Add(20 * logFlushInterval)
	for {
		log := s.String()
		if ok(log) || time.Now().After(deadline) {
			return log
		}
		time.Sleep(logFlushInterval / 4)
	}
}

// startServerLogged is startServer with the server's log readable by the test.
func startServerLogged(t *testing.T, dataDir string, extra ...string) (string, *syncBuffer) {
	t.Helper()
	addr := freePort(t)
	return "http://" + addr, startServerAt(t, addr, append([]string{"--data", dataDir}, extra...)...)
}

// startServerAt runs `mcpblob serve --listen addr` with args until it is
// ready and returns its log; the process is stopped by its PID (SIGINT,
// then SIGKILL) at cleanup. A test that must know the address before the
// server starts (an authorization server's resource URL) calls it directly.
func startServerAt(t *testing.T, addr string, args ...string) *syncBuffer {
	t.Helper()
	_, logs := startServerProcess(t, addr, args...)
	return logs
}

// startServerProcess is startServerAt that also returns the process (for a
// test that signals it).
func startServerProcess(t *testing.T, addr string, args ...string) (*os.Process, *syncBuffer) {
	t.Helper()
	logs := &syncBuffer{}
	cmd := exec.Command(mcpblobBin, append([]string{"serve", "--listen", addr}, args...)...)
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			t.Logf("server log (tail):\n%s", tail(logs.String(), 40))
		}
	})
	hc := &http.Client{Timeout: 2 * time.Second}
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); {
		if resp, err := hc.Get("http://" + addr + "/readyz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return cmd.Process, logs
			}
		}
		select {
		case <-done:
			t.Fatalf("mcpblob serve exited early:\n%s", logs.String())
		case <-time.After(50 * time.Millisecond):
		}
	}
	t.Fatalf("mcpblob serve not ready after 15s:\n%s", logs.String())
	return nil, nil
}

// writeBigFile writes size bytes (1 MiB blocks that all differ) and returns
// their sha256.
func writeBigFile(t *testing.T, path string, size int64) string {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	block := make([]byte, 1<<20)
	for i := range block {
		block[i] = byte(i ^ i>>9)
	}
	h := sha256.New()
	w := io.MultiWriter(f, h)
	for off := int64(0); off < size; off += int64(len(block)) {
		copy(block, []byte(time.Duration(off).String())) // make every block distinct
		n := min(int64(len(block)), size-off)
		if _, err := w.Write(block[:n]); err != nil {
			t.Fatal(err)
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

func fileSum(t *testing.T, path string) string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

func runCLI(t *testing.T, base string, args ...string) string {
	t.Helper()
	cmd := exec.Command(mcpblobBin, args...)
	cmd.Env = append(os.Environ(), "MCPBLOB_SERVER="+base)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("mcpblob %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// TestPutGet2GiB: `mcpblob put` of a 2 GiB file, then `mcpblob get` returns
// identical bytes; a `get` killed midway resumes from its partial file with
// a Range request (seen as a 206 in the server's access log).
func TestPutGet2GiB(t *testing.T) {
	if testing.Short() {
		t.Skip("moves 2 GiB several times")
	}
	// Mostly disk time: TestGatewayStreamsBigBlob (mostly CPU, in child
	// processes) runs beside it, after the package's sequential tests.
	t.Parallel()
	dir := t.TempDir()
	const size = 2 << 30
	src := filepath.Join(dir, "two.bin")
	start := time.Now()
	want := writeBigFile(t, src, size)
	t.Logf("wrote the 2 GiB source in %v", time.Since(start).Round(time.Millisecond))
	base, logs := startServerLogged(t, filepath.Join(dir, "data"), "--log-level", "debug")

	start = time.Now()
	out := runCLI(t, base, "put", src, "big/two.bin")
	t.Logf("put: %v: %s", time.Since(start).Round(time.Millisecond), strings.TrimSpace(out))
	if !strings.Contains(out, want) || !strings.Contains(out, "\t2147483648\t") {
		t.Fatalf("put printed %q, want size 2147483648 and sha256 %s", out, want)
	}

	dst := filepath.Join(dir, "out.bin")
	start = time.Now()
	out = runCLI(t, base, "get", "big/two.bin", dst)
	t.Logf("get: %v: %s", time.Since(start).Round(time.Millisecond), strings.TrimSpace(out))
	if got := fileSum(t, dst); got != want {
		t.Fatalf("get: sha256 %s, want %s", got, want)
	}
	os.Remove(dst)

	// Interrupted get: kill the client once part of the file has arrived.
	dst2 := filepath.Join(dir, "resumed.bin")
	cmd := exec.Command(mcpblobBin, "get", "big/two.bin", dst2)
	cmd.Env = append(os.Environ(), "MCPBLOB_SERVER="+base)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var partial int64
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if st, err := os.Stat(dst2 + ".part"); err == nil && st.Size() >= 256<<20 {
			break
		}
	}
	cmd.Process.Kill()
	cmd.Wait()
	st, err := os.Stat(dst2 + ".part")
	if err != nil {
		t.Fatalf("no partial file after the interrupted get: %v", err)
	}
	if partial = st.Size(); partial == 0 || partial >= size {
		t.Fatalf("partial file of %d bytes: the kill came too late to test resuming", partial)
	}
	out = runCLI(t, base, "get", "big/two.bin", dst2)
	t.Logf("resumed get after %d MiB: %s", partial>>20, strings.TrimSpace(out))
	if got := fileSum(t, dst2); got != want {
		t.Fatalf("resumed get: sha256 %s, want %s", got, want)
	}
	if _, err := os.Stat(dst2 + ".part"); err == nil {
		t.Error("the .part file is still there after a finished get")
	}
	ranged := func(l string) bool {
		return strings.Contains(l, "status=206") && strings.Contains(l, "path=/v1/blobs/big/two.bin")
	}
	log := logs.waitFor(func(log string) bool { return slices.ContainsFunc(strings.Split(log, "\n"), ranged) })
	if !slices.ContainsFunc(strings.Split(log, "\n"), ranged) {
		t.Errorf("the server saw no ranged GET (status 206) for the resumed download")
	}
}

// TestCLIAgainstServer drives put, ls, link (fetched without the API key),
// get to stdout and rm against a server that requires API keys.
func TestCLIAgainstServer(t *testing.T) {
	dir := t.TempDir()
	keys := filepath.Join(dir, "keys")
	d := sha256.Sum256([]byte("cli-key"))
	if err := os.WriteFile(keys, []byte(hex.EncodeToString(d[:])+" cli\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	base, _ := startServerLogged(t, filepath.Join(dir, "data"), "--auth-keys", keys)
	src := filepath.Join(dir, "notes é.txt")
	os.WriteFile(src, []byte("some notes\n"), 0o644)
	cli := func(wantOK bool, args ...string) string {
		t.Helper()
		cmd := exec.Command(mcpblobBin, args...)
		cmd.Env = append(os.Environ(), "MCPBLOB_SERVER="+base, "MCPBLOB_API_KEY=cli-key")
		out, err := cmd.CombinedOutput()
		if (err == nil) != wantOK {
			t.Fatalf("mcpblob %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	cli(true, "put", src, "docs/notes.txt")
	if out := cli(true, "ls", "docs/"); !strings.Contains(out, "docs/notes.txt") || !strings.Contains(out, "text/plain") {
		t.Fatalf("ls: %s", out)
	}
	link := exec.Command(mcpblobBin, "link", "--single-use", "docs/notes.txt")
	link.Env = append(os.Environ(), "MCPBLOB_SERVER="+base, "MCPBLOB_API_KEY=cli-key")
	out, err := link.Output() // stdout: the URL alone
	if err != nil {
		t.Fatalf("mcpblob link: %v", err)
	}
	url := strings.TrimSuffix(string(out), "\n")
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(body) != "some notes\n" || !strings.Contains(resp.Header.Get("Content-Disposition"), "filename*=UTF-8''notes%20%C3%A9.txt") {
		t.Fatalf("GET link: %d %q %v", resp.StatusCode, body, resp.Header)
	}
	if resp, err := http.Get(url); err != nil {
		t.Fatal(err)
	} else if resp.Body.Close(); resp.StatusCode != 404 {
		t.Fatalf("second GET of a single-use link: %d", resp.StatusCode)
	}
	if out := cli(true, "get", "docs/notes.txt", "-"); out != "some notes\n" {
		t.Fatalf("get -: %q", out)
	}
	cli(true, "rm", "docs/notes.txt")
	if out := cli(false, "get", "docs/notes.txt", "-"); !strings.Contains(out, "not found") {
		t.Fatalf("get after rm: %q", out)
	}
	cmd := exec.Command(mcpblobBin, "ls")
	cmd.Env = append(os.Environ(), "MCPBLOB_SERVER="+base, "MCPBLOB_API_KEY=wrong")
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(strings.ToLower(string(out)), "unauthorized") {
		t.Fatalf("ls with a wrong key: %v %s", err, out)
	}
}
