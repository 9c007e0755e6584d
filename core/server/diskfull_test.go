package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpblob/mcpblob/storage"
	"github.com/mcpblob/mcpblob/storage/localfs"
)

// Disk full (hardening item 7): a storage failure is the server's, on every
// upload surface. On a full file system PUT /v1/blobs and /u answer 507
// Insufficient Storage, MCP uploads (upload_file with the key before or
// after the file, request_upload's form answer, both eras) answer -32603;
// each is logged at ERROR without the payload; the temporary file is
// removed and nothing becomes visible.
//
// Two stores run the same checks: a local store on a real tmpfs filled to
// the brim (mounted in a private user and mount namespace by a child test
// process, skipped where unshare(1) cannot do that), and a local store
// behind a writer that fails with ENOSPC after a budget of bytes (real file
// I/O up to that point).

// fullTmpfsEnv names the tmpfs mount point in the child process.
const fullTmpfsEnv = "MCPBLOB_TEST_FULL_TMPFS"

func TestDiskFull(t *testing.T) {
	parallel(t)
	t.Run("tmpfs", func(t *testing.T) {
		dir := os.Getenv(fullTmpfsEnv)
		if dir == "" {
			runInTmpfs(t)
			return
		}
		be, err := localfs.Open(filepath.Join(dir, "data"), localfs.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { be.Close() })
		fillFS(t, dir, 512<<10)
		checkDiskFull(t, be, filepath.Join(dir, "data"))
	})
	t.Run("fault", func(t *testing.T) {
		dir := t.TempDir()
		st, err := localfs.Open(dir, localfs.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		checkDiskFull(t, &faultBackend{Backend: st, budget: 512 << 10}, dir)
	})
}

// runInTmpfs runs the tmpfs subtest again in a child process inside a new
// user and mount namespace with a 16 MiB tmpfs, and reports its outcome.
func runInTmpfs(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Skip(err)
	}
	dir := t.TempDir()
	probe := exec.Command("unshare", "--user", "--map-root-user", "--mount", "sh", "-c", `mount -t tmpfs -o size=16m none "$0"`, dir)
	if out, err := probe.CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs in a user namespace here (%v: %s); the fault subtest covers the checks", err, out)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "unshare", "--user", "--map-root-user", "--mount", "sh", "-c",
		`mount -t tmpfs -o size=16m none "$0" && exec "$@"`, dir,
		exe, "-test.run=^TestDiskFull$/^tmpfs$", "-test.count=1", "-test.v", "-test.timeout=2m")
	cmd.Env = append(os.Environ(), fullTmpfsEnv+"="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil || !bytes.Contains(out, []byte("--- PASS: TestDiskFull/tmpfs")) {
		t.Fatalf("in a 16 MiB tmpfs: %v\n%s", err, out)
	}
	t.Logf("passed in a 16 MiB tmpfs (child process in its own mount namespace)")
}

// fillFS fills the file system holding dir until less than leave bytes
// are free.
func fillFS(t *testing.T, dir string, leave int64) {
	t.Helper()
	f, err := os.Create(filepath.Join(dir, "filler"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := make([]byte, 256<<10)
	var n int64
	for {
		k, err := f.Write(chunk)
		n += int64(k)
		if errors.Is(err, syscall.ENOSPC) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Truncate(max(n-leave, 0)); err != nil {
		t.Fatal(err)
	}
	var fs syscall.Statfs_t
	if err := syscall.Statfs(dir, &fs); err != nil {
		t.Fatal(err)
	}
	t.Logf("file system full: %d bytes free", int64(fs.Bavail)*int64(fs.Bsize))
}

// faultBackend is a local store whose writers fail with ENOSPC (marked
// storage.ErrInsufficientStorage, as the local store marks it) once more
// than budget bytes were written to one of them.
type faultBackend struct {
	storage.Backend
	budget int64
}

func (b *faultBackend) Create(ctx context.Context, key string, opts storage.CreateOptions) (storage.Writer, error) {
	w, err := b.Backend.Create(ctx, key, opts)
	if err != nil {
		return nil, err
	}
	return &faultWriter{Writer: w, key: key, left: b.budget}, nil
}

type faultWriter struct {
	storage.Writer
	key  string
	left int64
}

func (w *faultWriter) Write(p []byte) (int, error) {
	if int64(len(p)) <= w.left {
		n, err := w.Writer.Write(p)
		w.left -= int64(n)
		return n, err
	}
	n, err := w.Writer.Write(p[:w.left])
	w.left -= int64(n)
	if err == nil {
		err = fmt.Errorf("faultfs: write %q: %w: %w", w.key, storage.ErrInsufficientStorage,
			&os.PathError{Op: "write", Path: ".mcpblob/tmp/x", Err: syscall.ENOSPC})
	}
	return n, err
}

// fullPayload is a file bigger than any free space the tests leave.
func fullPayload() (raw []byte, b64 string) {
	raw = bytes.Repeat([]byte("full disk! "), 2<<20/11)
	return raw, base64.StdEncoding.EncodeToString(raw)
}

// checkDiskFull runs every upload surface against be, whose storage is
// full beyond a few hundred KiB, and checks the answers, the log, that
// nothing became visible and that no temporary file is left in dataDir.
func checkDiskFull(t *testing.T, be storage.Backend, dataDir string) {
	var logBuf logBuffer
	c := newBPClient(t, Options{Backend: be, Logger: debugLogger(&logBuf, "text")})
	raw, b64 := fullPayload()
	errorLines := 0
	expectError := func(what string) {
		t.Helper()
		if n := strings.Count(logBuf.String(), "level=ERROR"); n <= errorLines {
			t.Errorf("%s: not logged at ERROR", what)
		} else {
			errorLines = n
		}
	}
	checkFullHTTP(t, c, raw, expectError)
	checkFullMCP(t, c, b64, expectError)
	// The store still works for what fits.
	if r := c.put("fits.txt", []byte("small"), nil); r.status != http.StatusCreated {
		t.Errorf("a small PUT after the failures: %d %s", r.status, r.body)
	}
	if keys := listAll(t, be); len(keys) != 1 || keys[0] != "fits.txt" {
		t.Errorf("visible after the failures: %v (want only fits.txt)", keys)
	}
	if tmp, _ := os.ReadDir(filepath.Join(dataDir, storage.ReservedDir, "tmp")); len(tmp) != 0 {
		t.Errorf("temporary files left: %v", tmp)
	}
	if log := logBuf.String(); strings.Contains(log, b64[:64]) || strings.Contains(log, string(raw[:64])) {
		t.Errorf("the log holds the payload")
	}
}

// checkFullHTTP: PUT /v1/blobs and both /u forms answer 507 with the JSON
// error insufficient_storage.
func checkFullHTTP(t *testing.T, c *bpClient, raw []byte, expectError func(string)) {
	t.Helper()
	check := func(what string, r httpResp) {
		t.Helper()
		if r.status != http.StatusInsufficientStorage || errCode(t, r) != "insufficient_storage" {
			t.Errorf("%s: got %d %s, want 507 insufficient_storage", what, r.status, r.body)
		}
		expectError(what)
	}
	check("PUT /v1/blobs", c.put("full/put.bin", raw, map[string]string{"Content-Type": "application/octet-stream"}))
	for _, method := range []string{"PUT", "POST"} {
		r := c.do("POST", "/v1/uploads", strings.NewReader(`{"maxSize":10485760,"ttlSeconds":600}`), nil)
		var up struct{ URL string }
		if json.Unmarshal(r.body, &up); up.URL == "" {
			t.Fatalf("POST /v1/uploads: %d %s", r.status, r.body)
		}
		ctype, body := "application/octet-stream", raw
		if method == "POST" {
			ctype, body = multipartBody(t, [3]string{"full.bin", "application/octet-stream", string(raw)})
		}
		check(method+" /u", c.do(method, up.URL, bytes.NewReader(body), map[string]string{"Content-Type": ctype}))
	}
}

// checkFullMCP: upload_file (key first, key last) and request_upload's form
// answer answer -32603 in both eras.
func checkFullMCP(t *testing.T, c *bpClient, b64 string, expectError func(string)) {
	t.Helper()
	uri := "data:application/octet-stream;base64," + b64
	for _, era := range []string{legacyVersion, modernVersion} {
		m := c.client(era, `{"elicitation":{"form":{}}}`)
		for _, order := range []string{"key first", "key last"} {
			args := `{"key":"full/mcp.bin","file":"` + uri + `"}`
			if order == "key last" {
				args = `{"file":"` + uri + `","key":"full/mcp.bin"}`
			}
			r := m.with(map[string]string{"Mcp-Param-Blob-Key": "full/mcp.bin"}).callTool("upload_file", args)
			if o := outcomeOf(r.msg); o.code != -32603 {
				t.Errorf("%s upload_file, %s: got %+v, want -32603", era, order, o)
			}
			expectError(era + " upload_file " + order)
		}
		if o := requestUploadForm(t, m, uri); o.code != -32603 {
			t.Errorf("%s request_upload form answer: got %+v, want -32603", era, o)
		}
		expectError(era + " request_upload")
	}
}

// requestUploadForm calls request_upload (form mode) and answers its
// elicitation with uri: in 2025-11-25 on the call's SSE stream, in
// 2026-07-28 by retrying with the requestState.
func requestUploadForm(t *testing.T, m *mcpClient, uri string) toolOutcome {
	t.Helper()
	answer := `{"action":"accept","content":{"file":"` + uri + `"}}`
	if m.version == modernVersion {
		return outcomeOf(m.retry(m.callTool("request_upload", `{}`), `{"upload":`+answer+`}`).msg)
	}
	sse := m.with(map[string]string{"Accept": "text/event-stream"})
	events := sse.events(sse.requestID(`"ru"`, "tools/call", `{"name":"request_upload","arguments":{}}`))
	for {
		msg, ok := events.next()
		switch {
		case !ok:
			t.Fatal("request_upload: the stream ended without a result")
		case msg.Method == "elicitation/create":
			m.reply(msg.ID, answer)
		case msg.Method == "" && string(msg.ID) == `"ru"`:
			return outcomeOf(msg)
		}
	}
}

// A PUT the store cannot take (full after 64 KiB) is answered 507 and the
// rest of its body, within drainLimit, is read: the client, still
// sending, is not reset, and the same connection serves the next request.
func TestDiskFullPutKeepsTheConnection(t *testing.T) {
	parallel(t)
	be := &faultBackend{Backend: newLocalStore(t), budget: 64 << 10}
	c := newBPClient(t, Options{Backend: be})
	conn, err := net.Dial("tcp", strings.TrimPrefix(c.base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(30 * time.Second))
	body := bytes.Repeat([]byte("x"), 4<<20)
	sent := make(chan error, 1)
	go func() {
		_, err := fmt.Fprintf(conn, "PUT /v1/blobs/full/keep.bin HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/octet-stream\r\nContent-Length: %d\r\n\r\n", len(body))
		if err == nil {
			_, err = conn.Write(body)
		}
		if err == nil {
			_, err = io.WriteString(conn, "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
		}
		sent <- err
	}()
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("reading the PUT's answer: %v", err)
	}
	io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != http.StatusInsufficientStorage {
		t.Fatalf("PUT on a full store: %d, want 507", resp.StatusCode)
	}
	if err := <-sent; err != nil {
		t.Fatalf("the client was cut off while sending the rest of its body: %v", err)
	}
	next, err := http.ReadResponse(br, nil)
	if err != nil || next.StatusCode != http.StatusOK {
		t.Fatalf("the next request on the same connection: %v %v", next, err)
	}
}
