package client

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpblob/mcpblob/core/tus"
	"github.com/mcpblob/mcpblob/storage"
)

// tusServer serves /v1/tus/ with the real protocol handler (core/tus) on
// in-memory records, HEAD /v1/blobs/{key} of what it completed, and PUT
// /v1/blobs/{key}; faults are injected per request.
type tusServer struct {
	h        *tus.Handler
	mu       sync.Mutex
	blobs    map[string][]byte
	patches  int   // PATCH requests seen
	patched  int64 // PATCH body bytes seen
	puts     int
	fail     int  // the next fail PATCHes answer 503
	failFrom int  // when > 0, PATCHes from this one on answer 503
	cut      int  // the next cut PATCHes lose their connection halfway
	garble   int  // the next garble PATCHes reach the handler with a byte changed (460)
	corrupt  bool // completion stores other bytes than sent
	noTus    bool // /v1/tus/ answers 404
	admitErr *tus.Error
}

func newTusServer(t *testing.T) (*tusServer, *Client, string) {
	s := &tusServer{blobs: map[string][]byte{}}
	s.h = tus.New(tus.Config{Records: &storage.MemRecords{}, Base: "/v1/tus/", MaxSize: 1 << 30, SegmentSize: 64 << 10,
		Admit: func(*tus.Upload) *tus.Error { return s.admitErr },
		Complete: func(_ context.Context, u *tus.Upload, data tus.Data) (string, *tus.Error) {
			b, err := io.ReadAll(data.Reader)
			if err != nil {
				return "", &tus.Error{Status: 500, Code: "internal", Message: "internal error"}
			}
			s.mu.Lock()
			defer s.mu.Unlock()
			if s.corrupt {
				b[0] ^= 1
			}
			s.blobs[u.Metadata["key"]] = b
			return u.Metadata["key"], nil
		}})
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	c, err := New(ts.URL, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return s, c, ts.URL
}

func (s *tusServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if key, ok := strings.CutPrefix(r.URL.Path, "/v1/blobs/"); ok {
		s.serveBlob(w, r, key)
		return
	}
	id, ok := strings.CutPrefix(r.URL.Path, "/v1/tus/")
	if !ok || s.noTus {
		writeError(w, 404, "not_found", "no such route")
		return
	}
	if r.Method == http.MethodPatch && s.fault(w, r) {
		return
	}
	body := io.Reader(r.Body)
	s.mu.Lock()
	if r.Method == http.MethodPatch && s.garble > 0 {
		s.garble--
		body = io.MultiReader(strings.NewReader("X"), io.LimitReader(r.Body, r.ContentLength-1))
	}
	s.mu.Unlock()
	resp := s.h.Serve(r.Context(), tus.Request{Method: r.Method, ID: id, Header: r.Header.Get, Body: body,
		ContentLength: r.ContentLength, Principal: "alice"})
	for _, kv := range resp.Header {
		w.Header().Set(kv[0], kv[1])
	}
	if resp.Error != nil {
		writeError(w, resp.Status, resp.Code, resp.Message)
		return
	}
	w.WriteHeader(resp.Status)
}

// fault answers a PATCH with an injected failure, when one is due.
func (s *tusServer) fault(w http.ResponseWriter, r *http.Request) bool {
	s.mu.Lock()
	s.patches++
	s.patched += r.ContentLength
	fail, cut := s.fail > 0 || s.failFrom > 0 && s.patches >= s.failFrom, s.fail == 0 && s.cut > 0
	if s.fail > 0 {
		s.fail--
	} else if cut {
		s.cut--
	}
	s.mu.Unlock()
	switch {
	case fail:
		w.Header().Set("Retry-After", "0")
		writeError(w, 503, "busy", "every upload slot is in use")
	case cut:
		io.CopyN(io.Discard, r.Body, r.ContentLength/2)
		conn, _, err := http.NewResponseController(w).Hijack()
		if err == nil {
			conn.Close()
		}
	}
	return fail || cut
}

func (s *tusServer) serveBlob(w http.ResponseWriter, r *http.Request, key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r.Method == http.MethodPut {
		b, _ := io.ReadAll(r.Body)
		s.blobs[key], s.puts = b, s.puts+1
		sum := sha256.Sum256(b)
		w.WriteHeader(201)
		io.WriteString(w, `{"uri":"blob:///`+key+`","key":"`+key+`","size":`+strconv.Itoa(len(b))+`,"sha256":"`+hex.EncodeToString(sum[:])+`"}`)
		return
	}
	b, ok := s.blobs[key]
	if !ok {
		writeError(w, 404, "not_found", "no such blob")
		return
	}
	sum := sha256.Sum256(b)
	w.Header().Set("x-mcp-sha256", hex.EncodeToString(sum[:]))
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
}

// testFile writes n pseudo-random bytes and returns the path and sha256.
func testFile(t *testing.T, n int) (string, string) {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7 + i>>11)
	}
	p := filepath.Join(t.TempDir(), "f.bin")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	return p, hex.EncodeToString(sum[:])
}

func putOpts(dir string) PutFileOptions {
	return PutFileOptions{ChunkSize: 64 << 10, StateDir: dir, RetryWait: 1}
}

// TestPutFileRetries: 503s, a connection cut mid-PATCH and bytes changed
// on the way (460) are retried from the server's offset; the blob is the file.
func TestPutFileRetries(t *testing.T) {
	s, c, _ := newTusServer(t)
	path, want := testFile(t, 300<<10)
	s.fail, s.cut, s.garble = 2, 1, 1
	b, err := c.PutFile(context.Background(), "a/f.bin", path, putOpts(t.TempDir()))
	if err != nil || b.SHA256 != want || b.Size != 300<<10 {
		t.Fatalf("PutFile = %+v, %v; want sha256 %s", b, err, want)
	}
	if s.patches != 5+4 || s.puts != 0 {
		t.Errorf("%d PATCHes and %d PUTs, want 5 chunks + 4 failed attempts and no PUT", s.patches, s.puts)
	}
}

// TestPutFileGivesUp: a server that keeps answering 503 is given up on
// after Retries attempts, and the state is kept for a later run, which
// resumes from the server's offset.
func TestPutFileGivesUp(t *testing.T) {
	s, c, _ := newTusServer(t)
	path, want := testFile(t, 300<<10)
	dir := t.TempDir()
	opts := putOpts(dir)
	opts.Retries = 3
	var notices []string
	opts.Notice = func(m string) { notices = append(notices, m) }
	s.failFrom = 4 // three chunks in, the server goes down
	_, err := c.PutFile(context.Background(), "a/f.bin", path, opts)
	if err == nil || !strings.Contains(err.Error(), "gave up after 4 attempts") || !strings.Contains(err.Error(), "every upload slot is in use") {
		t.Fatalf("PutFile against a down server: %v, want it to give up after 4 attempts quoting the server", err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	if len(files) != 1 {
		t.Fatalf("state files %v, want one", files)
	}
	if st, _ := os.Stat(files[0]); st.Mode().Perm() != 0o600 {
		t.Errorf("state file mode %v, want 0600", st.Mode().Perm())
	}
	s.mu.Lock()
	s.failFrom, s.patched = 0, 0
	s.mu.Unlock()
	b, err := c.PutFile(context.Background(), "a/f.bin", path, opts)
	if err != nil || b.SHA256 != want {
		t.Fatalf("second PutFile = %+v, %v", b, err)
	}
	if len(notices) != 1 || !strings.HasPrefix(notices[0], "resuming at byte 196608 of 307200") {
		t.Errorf("notices %q, want one resuming at 196608", notices)
	}
	if s.patched != 300<<10-196608 {
		t.Errorf("the second run sent %d bytes, want the %d the server lacked", s.patched, 300<<10-196608)
	}
	if files, _ := filepath.Glob(filepath.Join(dir, "*.json")); len(files) != 0 {
		t.Errorf("state files %v left after the put finished", files)
	}
}

// TestPutFileRefused: a 4xx is not retried; the error quotes the server.
func TestPutFileRefused(t *testing.T) {
	s, c, _ := newTusServer(t)
	path, _ := testFile(t, 100<<10)
	s.admitErr = &tus.Error{Status: 400, Code: "invalid_key", Message: `key "a/f.bin" is not allowed here`}
	_, err := c.PutFile(context.Background(), "a/f.bin", path, putOpts(t.TempDir()))
	var e *Error
	if !errors.As(err, &e) || e.Status != 400 || !strings.Contains(err.Error(), `key "a/f.bin" is not allowed here`) {
		t.Fatalf("PutFile refused: %v, want the server's 400 and its message", err)
	}
}

// TestPutFileChecksumMismatch: a blob whose sha256 is not the file's is an
// ErrChecksum naming both; the next run starts over.
func TestPutFileChecksumMismatch(t *testing.T) {
	s, c, _ := newTusServer(t)
	path, want := testFile(t, 100<<10)
	s.corrupt = true
	dir := t.TempDir()
	_, err := c.PutFile(context.Background(), "a/f.bin", path, putOpts(dir))
	if !errors.Is(err, ErrChecksum) || !strings.Contains(err.Error(), want) {
		t.Fatalf("PutFile with bytes changed on the server: %v, want ErrChecksum naming %s", err, want)
	}
	if files, _ := filepath.Glob(filepath.Join(dir, "*.json")); len(files) != 0 {
		t.Errorf("state files %v left after a mismatch", files)
	}
}

// TestPutFileSmallOrNoTus: a file under one chunk, Whole, or a server
// without /v1/tus/, gets one PUT.
func TestPutFileSmallOrNoTus(t *testing.T) {
	s, c, _ := newTusServer(t)
	small, want := testFile(t, 1000)
	if b, err := c.PutFile(context.Background(), "s", small, putOpts(t.TempDir())); err != nil || b.SHA256 != want || s.puts != 1 || s.patches != 0 {
		t.Fatalf("small file: %+v, %v, %d PUTs, %d PATCHes", b, err, s.puts, s.patches)
	}
	big, want := testFile(t, 200<<10)
	opts := putOpts(t.TempDir())
	opts.Whole = true
	if b, err := c.PutFile(context.Background(), "w", big, opts); err != nil || b.SHA256 != want || s.puts != 2 || s.patches != 0 {
		t.Fatalf("Whole: %+v, %v, %d PUTs, %d PATCHes", b, err, s.puts, s.patches)
	}
	s.noTus = true
	if b, err := c.PutFile(context.Background(), "b", big, putOpts(t.TempDir())); err != nil || b.SHA256 != want || s.puts != 3 {
		t.Fatalf("server without tus: %+v, %v, %d PUTs", b, err, s.puts)
	}
}

// TestPutFilePrunesStaleStates: a put removes state files older than
// StaleStateAge and stray temporary files of a killed save, and keeps
// recent ones; a state file is touched at each accepted chunk, so a long
// put's file is not pruned while it progresses.
func TestPutFilePrunesStaleStates(t *testing.T) {
	_, c, _ := newTusServer(t)
	dir := t.TempDir()
	old := time.Now().Add(-StaleStateAge - time.Hour)
	files := map[string]time.Time{
		"stale.json": old, "fresh.json": time.Now().Add(-time.Hour),
		".put-123": time.Now().Add(-2 * staleTempAge), ".put-456": time.Now(), "other.txt": old,
	}
	for name, mtime := range files {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("{}"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, mtime, mtime); err != nil {
			t.Fatal(err)
		}
	}
	path, want := testFile(t, 300<<10)
	opts := putOpts(dir)
	step := 0
	opts.Progress = func(done, total int64) {
		switch {
		case step == 0 && done >= 64<<10: // age this put's state file
			step = 1
			backdateRunning(t, dir, files, old)
		case step == 1 && done >= 192<<10: // a chunk was accepted since
			step = 2
			assertStateFresh(t, dir, files)
		}
	}
	if b, err := c.PutFile(context.Background(), "a/f.bin", path, opts); err != nil || b.SHA256 != want {
		t.Fatalf("PutFile = %+v, %v", b, err)
	}
	left := map[string]bool{}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		left[e.Name()] = true
	}
	if step != 2 {
		t.Fatalf("progress reached step %d of 2", step)
	}
	wantLeft := map[string]bool{"fresh.json": true, ".put-456": true, "other.txt": true}
	if len(left) != len(wantLeft) || !left["fresh.json"] || !left[".put-456"] || !left["other.txt"] {
		t.Errorf("left %v, want %v (the stale state, the old temporary file and the finished put's state gone)", left, wantLeft)
	}
}

// runningState is the running put's state file: the one not in seeded.
func runningState(t *testing.T, dir string, seeded map[string]time.Time) os.DirEntry {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if _, ok := seeded[e.Name()]; !ok {
			return e
		}
	}
	t.Fatal("the running put has no state file")
	return nil
}

func backdateRunning(t *testing.T, dir string, seeded map[string]time.Time, to time.Time) {
	if err := os.Chtimes(filepath.Join(dir, runningState(t, dir, seeded).Name()), to, to); err != nil {
		t.Fatal(err)
	}
}

// assertStateFresh checks the running put's state file was touched
// within a minute.
func assertStateFresh(t *testing.T, dir string, seeded map[string]time.Time) {
	e := runningState(t, dir, seeded)
	if info, err := e.Info(); err != nil || time.Since(info.ModTime()) > time.Minute {
		t.Errorf("the running put's state %s was not touched by an accepted chunk: %v", e.Name(), err)
	}
}
