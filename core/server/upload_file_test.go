package server

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/mcpblob/mcpblob/core/mcp"
	"github.com/mcpblob/mcpblob/storage"
	"github.com/mcpblob/mcpblob/storage/localfs"
)

// newLocalStore opens a local store in a temporary folder.
func newLocalStore(t *testing.T) *localfs.Store {
	t.Helper()
	return newLocalStoreAt(t, t.TempDir())
}

// newLocalStoreAt opens a local store in dir, closed when the test ends.
func newLocalStoreAt(t *testing.T, dir string) *localfs.Store {
	t.Helper()
	st, err := localfs.Open(dir, localfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// listAll lists every key in st.
func listAll(t *testing.T, st storage.Backend) []string {
	t.Helper()
	return storedUnder(t, st, "")
}

// storedUnder lists the keys under prefix (at most 1000).
func storedUnder(t *testing.T, be storage.Backend, prefix string) []string {
	t.Helper()
	page, err := be.List(context.Background(), prefix, "", 1000)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, it := range page.Items {
		keys = append(keys, it.Key)
	}
	return keys
}

// dataURIBody streams a tools/call upload_file body whose data URI carries
// size pseudo-random bytes, encoding them on the fly; sum receives their
// SHA-256 once the body has been read.
type dataURIBody struct {
	pr *io.PipeReader
}

func newDataURIBody(prefix string, size int64, suffix string, sum *[32]byte) *dataURIBody {
	pr, pw := io.Pipe()
	go func() {
		h := sha256.New()
		src := io.TeeReader(io.LimitReader(rand.NewChaCha8([32]byte{9}), size), h)
		bw := bufio.NewWriterSize(pw, 256<<10) // base64.NewEncoder writes 1 KiB at a time
		if _, err := io.WriteString(bw, prefix); err != nil {
			return
		}
		enc := base64.NewEncoder(base64.StdEncoding, bw)
		if _, err := io.CopyBuffer(enc, src, make([]byte, 192<<10)); err != nil {
			pw.CloseWithError(err)
			return
		}
		enc.Close()
		copy(sum[:], h.Sum(nil))
		_, _ = io.WriteString(bw, suffix)
		pw.CloseWithError(bw.Flush())
	}()
	return &dataURIBody{pr: pr}
}

func (d *dataURIBody) Read(p []byte) (int, error) { return d.pr.Read(p) }

// Close stops the generator, also when the body was not read to the end.
func (d *dataURIBody) Close() error { return d.pr.Close() }

// upload_file's own behaviour (its errors, key orders, the eras, SSE) is
// tested in core/blobs, in memory; what is left here needs the HTTP front:
// a body streamed over a connection, and the connection's fate.

// TestUploadFileHuge sends upload_file with a 1 GiB data URI generated on
// the fly (never held by the test) and checks the stored SHA-256 and that
// the heap grew by less than 32 MiB. Both scanner paths run: key first
// (straight into storage) and file first (decoded spool, then storage).
// 64 MiB under -race or -short.
func TestUploadFileHuge(t *testing.T) {
	size := int64(1 << 30)
	if raceEnabled || testing.Short() {
		size = 64 << 20
	}
	const maxGrowth = 32 << 20
	heapTest(t)
	st := newLocalStore(t)
	c := serveMCP(t, Options{Backend: st}, legacyVersion, `{}`)
	for _, order := range []string{"key-first", "file-first"} {
		if order == "file-first" && size > 256<<20 && testing.Short() {
			continue
		}
		t.Run(order, func(t *testing.T) {
			c := c.in(t)
			key := "huge/" + order + ".bin"
			var prefix, suffix string
			if order == "key-first" {
				prefix = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"upload_file","arguments":{"key":"` + key + `","file":"data:application/octet-stream;base64,`
				suffix = `"}}}`
			} else {
				prefix = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"upload_file","arguments":{"file":"data:application/octet-stream;base64,`
				suffix = `","key":"` + key + `"}}}`
			}
			var sum [32]byte
			watch := heapWatch(t)
			start := time.Now()
			wire := int64(len(prefix)+len(suffix)) + (size+2)/3*4
			r := c.send(c.raw(newDataURIBody(prefix, size, suffix, &sum), wire))
			growth := watch()
			el := time.Since(start)
			res := r.tool()
			if r.status != 200 || res.IsError {
				t.Fatalf("%d %.300s", r.status, r.body)
			}
			if got, want := res.StructuredContent.SHA256, hex.EncodeToString(sum[:]); got != want || res.StructuredContent.Size != size {
				t.Fatalf("sha256 %s size %d, want %s %d", got, res.StructuredContent.Size, want, size)
			}
			t.Logf("%s: %d MiB in %v (%.0f MB/s decoded, %.0f MB/s on the wire), heap growth %.1f MiB", order, size>>20,
				el.Round(time.Millisecond), float64(size)/el.Seconds()/1e6, float64(wire)/el.Seconds()/1e6, float64(growth)/(1<<20))
			if growth > maxGrowth {
				t.Fatalf("heap grew by %d bytes, limit %d", growth, maxGrowth)
			}
			if err := st.Delete(context.Background(), key); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestUploadFileAbandoned: a data URI far over maxSize is refused while it
// streams; past the drain allowance the server answers at once with the
// isError result and closes the connection. Nothing is stored, and no log
// line (at debug level) carries the payload.
func TestUploadFileAbandoned(t *testing.T) {
	parallel(t)
	st := newLocalStore(t)
	logs := &logBuffer{}
	logger := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	c := serveMCP(t, Options{Backend: st, Logger: logger, MCP: mcp.Options{MaxFileBytes: 1 << 20}}, legacyVersion, `{}`)
	var sum [32]byte
	prefix := `{"jsonrpc":"2.0","id":"big","method":"tools/call","params":{"name":"upload_file","arguments":{"key":"k","file":"data:application/octet-stream;base64,`
	// The server stops reading and may reset the connection under the
	// chunked body's write.
	resp, out := sendRefused(t, c.raw(newDataURIBody(prefix, 64<<20, `"}}}`, &sum), -1).Request)
	var m struct {
		ID     string
		Result toolResult
	}
	if err := json.Unmarshal(out, &m); err != nil || m.ID != "big" || !m.Result.IsError ||
		m.Result.Content[0].Text != `Argument "file": file is larger than maxSize 1048576 bytes` || !resp.Close {
		t.Fatalf("%d close=%v %s", resp.StatusCode, resp.Close, out)
	}
	if keys := listAll(t, st); len(keys) != 0 {
		t.Fatalf("stored %v", keys)
	}
	// The valid small cases log at debug too; none may leak a payload.
	c.callTool("upload_file", `{"key":"x","file":"data:text/plain;base64,U0VDUkVUU0VDUkVUU0VDUkVU"}`)
	c.callTool("upload_file", `{"key":"y","file":"data:image/png;base64,U0VDUkVUU0VDUkVUU0VDUkVU"}`)
	if log := logs.String(); strings.Contains(log, "U0VDUkVU") || strings.Contains(log, "AAAAAAAA") {
		t.Fatalf("a data URI payload reached the log:\n%s", log)
	}
}

// TestUploadFileMemBackend: upload_file of a small data URI stores it on
// the transcripts' memory backend as on the local store (the fixture's
// Create used to refuse every write, which answered -32603).
func TestUploadFileMemBackend(t *testing.T) {
	parallel(t)
	be := newMemBackend()
	base, _ := startTestServer(t, Options{Backend: be})
	for _, modern := range []bool{false, true} {
		c := newFilesClient(t, base, "", modern, `{}`)
		key := "mem/" + map[bool]string{false: "legacy", true: "modern"}[modern] + ".txt"
		var res struct {
			IsError           bool `json:"isError"`
			StructuredContent struct{ Key, SHA256 string }
		}
		c.ok("tools/call", map[string]any{"name": "upload_file", "arguments": map[string]any{"key": key, "file": "data:text/plain;base64,aGVsbG8="}}, &res)
		if res.IsError || res.StructuredContent.Key != key {
			t.Fatalf("upload_file on the memory backend: %+v", res)
		}
		if info, err := be.Stat(t.Context(), key); err != nil || info.Size != 5 || info.MediaType != "text/plain" {
			t.Fatalf("stored: %+v, %v", info, err)
		}
	}
}
