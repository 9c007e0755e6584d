package main

// `mcpblob put` killed halfway and run again: it continues from the
// server's tus offset (docs/uploads.md), and a changed file starts over.

import (
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpblob/mcpblob/core/client"
)

// countingProxy forwards loopback TCP connections to target, counting the
// bytes sent upstream and pacing them at rate bytes per second (0: no pacing).
type countingProxy struct {
	ln     net.Listener
	target string
	sent   atomic.Int64
	rate   atomic.Int64
	open   atomic.Int64 // connections whose upstream half is still copying
	wg     sync.WaitGroup
}

func startCountingProxy(t *testing.T, target string) *countingProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &countingProxy{ln: ln, target: target}
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(func() { ln.Close(); p.wg.Wait() })
	return p
}

func (p *countingProxy) url() string { return "http://" + p.ln.Addr().String() }

func (p *countingProxy) accept() {
	defer p.wg.Done()
	for {
		down, err := p.ln.Accept()
		if err != nil {
			return
		}
		up, err := net.Dial("tcp", p.target)
		if err != nil {
			down.Close()
			continue
		}
		p.wg.Add(2)
		p.open.Add(1)
		go func() { defer p.wg.Done(); io.Copy(down, up); down.Close() }()
		go func() { defer p.wg.Done(); p.upstream(up, down); up.Close(); p.open.Add(-1) }()
	}
}

func (p *countingProxy) upstream(up, down net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := down.Read(buf)
		if n > 0 {
			if _, werr := up.Write(buf[:n]); werr != nil {
				return
			}
			p.sent.Add(int64(n))
			if r := p.rate.Load(); r > 0 {
				time.Sleep(time.Duration(int64(n) * int64(time.Second) / r))
			}
		}
		if err != nil {
			return
		}
	}
}

// tusOffset HEADs a tus upload on the server itself (not through the proxy).
func tusOffset(t *testing.T, base, upload string) (int64, int) {
	t.Helper()
	u, err := url.Parse(upload)
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodHead, base+u.Path, nil)
	req.Header.Set("Tus-Resumable", "1.0.0")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	off, _ := strconv.ParseInt(resp.Header.Get("Upload-Offset"), 10, 64)
	return off, resp.StatusCode
}

// putState reads the one state file `mcpblob put` keeps under cache.
func putState(t *testing.T, cache string) (upload string, ok bool) {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(cache, "mcpblob", "put", "*.json"))
	if len(files) != 1 {
		return "", false
	}
	raw, err := os.ReadFile(files[0])
	if err != nil {
		return "", false
	}
	var s struct{ Upload string }
	if json.Unmarshal(raw, &s) != nil || s.Upload == "" {
		return "", false
	}
	if st, err := os.Stat(files[0]); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("state file %s: mode %v, want 0600", files[0], st.Mode().Perm())
	}
	return s.Upload, true
}

// putCmd is `mcpblob put src key` through the proxy, with its own cache dir.
func putCmd(p *countingProxy, cache, src, key string) (*exec.Cmd, *bytes.Buffer, *bytes.Buffer) {
	cmd := exec.Command(mcpblobBin, "put", src, key)
	cmd.Env = append(os.Environ(), "MCPBLOB_SERVER="+p.url(), "MCPBLOB_API_KEY=", "XDG_CACHE_HOME="+cache)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	return cmd, &out, &errOut
}

// killPutMidway starts a paced put and SIGKILLs it in the middle of a
// PATCH, once the server holds at least one chunk; it returns the upload's URL, the bytes the killed put
// sent and the server's offset after the kill.
func killPutMidway(t *testing.T, base string, p *countingProxy, cache, src, key string, size int64) (string, int64, int64) {
	t.Helper()
	p.sent.Store(0)
	p.rate.Store(12 << 20)
	cmd, _, errOut := putCmd(p, cache, src, key)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	upload := ""
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if u, ok := putState(t, cache); ok {
			// mid-PATCH: a chunk is durable and half the next one sent
			if off, _ := tusOffset(t, base, u); off >= client.DefaultChunkSize && p.sent.Load() >= off+client.DefaultChunkSize/2 {
				upload = u
				break
			}
		}
	}
	cmd.Process.Kill()
	cmd.Wait()
	// what the killed put had written is still in the proxy's socket
	// buffer: count it with this run, not the next
	for deadline := time.Now().Add(30 * time.Second); p.open.Load() > 0 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if upload == "" {
		t.Fatalf("the put never recorded an upload holding a chunk; its stderr: %s", errOut)
	}
	sent := p.sent.Load()
	off, _ := tusOffset(t, base, upload)
	for prev := int64(-1); off != prev; { // a PATCH that arrived whole may still be committing
		time.Sleep(100 * time.Millisecond)
		prev, off = off, func() int64 { o, _ := tusOffset(t, base, upload); return o }()
	}
	if off <= 0 || off >= size {
		t.Fatalf("the server holds %d of %d bytes after the kill: the kill came too late", off, size)
	}
	return upload, sent, off
}

// TestPutResumesAfterKill: a put SIGKILLed halfway leaves an upload on the
// server; run again, it sends only what the server lacks (the killed run
// lost at most one chunk) and the blob's sha256 is the file's. A file
// changed since starts over, and the old upload is terminated.
func TestPutResumesAfterKill(t *testing.T) {
	dir := t.TempDir()
	const size = 24 << 20
	const chunk = client.DefaultChunkSize
	const slack = 64 << 10 // request and response heads
	src := filepath.Join(dir, "resume.bin")
	want := writeBigFile(t, src, size)
	base, _ := startServerLogged(t, filepath.Join(dir, "data"))
	p := startCountingProxy(t, strings.TrimPrefix(base, "http://"))
	cache := filepath.Join(dir, "cache")

	_, sent, off := killPutMidway(t, base, p, cache, src, "big/resume.bin", size)
	t.Logf("killed put: sent %d bytes, the server holds %d of %d", sent, off, size)
	if lost := sent - off; lost > chunk+slack {
		t.Errorf("the killed put sent %d bytes the server did not keep, over one chunk (%d)", lost, chunk)
	}

	p.sent.Store(0)
	p.rate.Store(0)
	cmd, out, errOut := putCmd(p, cache, src, "big/resume.bin")
	if err := cmd.Run(); err != nil {
		t.Fatalf("rerun: %v\n%s", err, errOut)
	}
	resent := p.sent.Load()
	t.Logf("rerun: sent %d bytes; %s; %s", resent, strings.TrimSpace(errOut.String()), strings.TrimSpace(out.String()))
	if resent < size-off || resent > size-off+slack {
		t.Errorf("the rerun sent %d bytes, want the %d the server lacked (+ heads)", resent, size-off)
	}
	if !strings.Contains(errOut.String(), "resuming at byte "+strconv.FormatInt(off, 10)) {
		t.Errorf("the rerun's stderr %q does not say it resumes at %d", errOut, off)
	}
	if !strings.Contains(out.String(), want) || !strings.Contains(out.String(), "\t25165824\t") {
		t.Errorf("the rerun printed %q, want size 25165824 and sha256 %s", out, want)
	}
	if sum := blobSHA(t, base, "big/resume.bin"); sum != want {
		t.Errorf("stored blob sha256 %s, want %s", sum, want)
	}
	if _, ok := putState(t, cache); ok {
		t.Error("the state file is still there after the put finished")
	}

	t.Run("changed-file-starts-over", func(t *testing.T) {
		upload, _, _ := killPutMidway(t, base, p, cache, src, "big/changed.bin", size)
		f, err := os.OpenFile(src, os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteAt([]byte("changed"), 100)
		f.Close()
		want := fileSum(t, src)
		p.sent.Store(0)
		p.rate.Store(0)
		cmd, out, errOut := putCmd(p, cache, src, "big/changed.bin")
		if err := cmd.Run(); err != nil {
			t.Fatalf("rerun: %v\n%s", err, errOut)
		}
		if !strings.Contains(errOut.String(), "file changed") || !strings.Contains(out.String(), want) {
			t.Errorf("rerun of a changed file: stdout %q stderr %q, want a start over and sha256 %s", out, errOut, want)
		}
		if sent := p.sent.Load(); sent < size {
			t.Errorf("the rerun sent %d bytes, want the whole file (%d)", sent, size)
		}
		if sum := blobSHA(t, base, "big/changed.bin"); sum != want {
			t.Errorf("stored blob sha256 %s, want %s", sum, want)
		}
		if _, status := tusOffset(t, base, upload); status != http.StatusNotFound {
			t.Errorf("the abandoned upload answers HEAD %d, want 404 (terminated)", status)
		}
	})
}

func blobSHA(t *testing.T, base, key string) string {
	t.Helper()
	resp, err := http.Head(base + "/v1/blobs/" + key)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.Header.Get("x-mcp-sha256")
}
