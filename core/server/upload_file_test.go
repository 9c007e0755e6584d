package server

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcpblob/mcpblob/core/blobs"
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

// TestUploadFileInputs sends upload_file each kind of bad input (and the
// good ones the SEP requires servers to accept) and checks the exact
// isError text and that nothing is stored on failure.
func TestUploadFileInputs(t *testing.T) {
	parallel(t)
	st := newLocalStore(t)
	c := serveMCP(t, Options{Backend: st, MCP: mcp.Options{MaxFileBytes: 1 << 20},
		Blobs: blobs.Options{UploadAccept: []string{"image/*", "text/plain", "application/pdf"}}}, legacyVersion, `{}`)
	big := base64.StdEncoding.EncodeToString(make([]byte, 2<<20))
	png := base64.StdEncoding.EncodeToString([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"))
	const accepted = "image/*, text/plain, application/pdf"
	bad := []struct {
		name, args, want string
	}{
		{"non-data scheme", `"key":"a","file":"https://example.com/cat.png"`,
			`Argument "file": scheme "https" is not supported: a data: URI is required`},
		{"not a URI", `"file":"hello"`, `Argument "file": not a URI: a data: URI is required`},
		{"malformed", `"key":"a","file":"data:image/png;base64"`, `Argument "file": malformed data URI: missing ',' separator`},
		{"bad base64", `"key":"a","file":"data:text/plain;base64,aGV*bG8="`, `Argument "file": malformed data URI: bad base64 at byte 3`},
		{"over maxSize, streamed to storage", `"key":"a","file":"data:image/png;base64,` + big + `"`,
			`Argument "file": file is larger than maxSize 1048576 bytes`},
		{"over maxSize, spooled", `"file":"data:image/png;base64,` + big + `","key":"a"`,
			`Argument "file": file is larger than maxSize 1048576 bytes`},
		{"type not in accept", `"key":"a","file":"data:application/zip;base64,UEsDBA=="`,
			`Argument "file": media type "application/zip" is not accepted (accept: ` + accepted + `)`},
		{"type lie", `"key":"a","file":"data:image/png;base64,aGVsbG8="`,
			`Argument "file": content does not match the declared media type "image/png"`},
		{"type lie, other format", `"key":"a","file":"data:application/pdf;base64,` + png + `"`,
			`Argument "file": content is image/png, not the declared media type "application/pdf"`},
		{"empty file", `"key":"a","file":"data:text/plain;base64,"`, `Argument "file": file is empty`},
		{"missing", `"key":"a"`, `Argument "file" is required`},
		{"bad key", `"key":"../x","file":"data:text/plain,hi"`, `Argument "key": not a valid key (contains a ".." segment)`},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			c := c.in(t)
			r := c.callTool("upload_file", "{"+tc.args+"}")
			if r.status != 200 {
				t.Fatalf("status %d: %.300s", r.status, r.body)
			}
			res := r.tool()
			if !res.IsError || len(res.Content) != 1 || res.Content[0].Text != tc.want {
				t.Fatalf("got %+v\nwant isError %q", res, tc.want)
			}
			if bytes.Contains(r.body, []byte(big[:64])) {
				t.Fatal("the data URI leaked into the error")
			}
			if keys := listAll(t, st); len(keys) != 0 {
				t.Fatalf("stored %v after a failure", keys)
			}
		})
	}
	good := []struct {
		name, args, key, content, mt string
	}{
		{"percent-encoded", `"key":"p.txt","file":"data:text/plain,hello%20world"`, "p.txt", "hello world", "text/plain"},
		{"escaped slash", `"key":"s.txt","file":"data:text\/plain;base64,aGVsbG8="`, "s.txt", "hello", "text/plain"},
		{"unicode-escaped slash", `"file":"data:text\u002Fplain;charset=UTF-8;base64,aGVsbG8=","key":"u.txt"`, "u.txt", "hello", "text/plain; charset=utf-8"},
		{"png, filename, default key", `"filename":"dot.png","file":"data:image/png;base64,` + png + `"`, "", "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "image/png"},
	}
	for _, tc := range good {
		t.Run(tc.name, func(t *testing.T) {
			c := c.in(t)
			r := c.callTool("upload_file", "{"+tc.args+"}")
			res := r.tool()
			if r.status != 200 || res.IsError {
				t.Fatalf("status %d: %s", r.status, r.body)
			}
			sum := sha256.Sum256([]byte(tc.content))
			sc := res.StructuredContent
			if sc.SHA256 != hex.EncodeToString(sum[:]) || sc.Size != int64(len(tc.content)) || sc.MimeType != tc.mt {
				t.Fatalf("structuredContent %+v", sc)
			}
			if tc.key != "" && sc.Key != tc.key {
				t.Fatalf("key %q, want %q", sc.Key, tc.key)
			}
			if tc.key == "" && (!strings.HasPrefix(sc.Key, "uploads/") || !strings.HasSuffix(sc.Key, "/dot.png")) {
				t.Fatalf("default key %q", sc.Key)
			}
			if len(res.Content) != 2 || res.Content[1].Type != "resource_link" || res.Content[1].URI != sc.URI {
				t.Fatalf("content %+v", res.Content)
			}
			if err := st.Delete(context.Background(), sc.Key); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestUploadFileParamsFirst sends params before method and arguments before
// name: nothing is known about the call while the data URI arrives, so it is
// spooled (decoded) and stored once the tool runs.
func TestUploadFileParamsFirst(t *testing.T) {
	parallel(t)
	st := newLocalStore(t)
	c := serveMCP(t, Options{Backend: st}, legacyVersion, `{}`)
	payload := make([]byte, 300<<10)
	for i := range payload {
		payload[i] = byte(i * 7)
	}
	body := `{"params":{"arguments":{"file":"data:application/octet-stream;base64,` + base64.StdEncoding.EncodeToString(payload) +
		`","key":"late/key.bin"},"name":"upload_file"},"id":"x","method":"tools/call","jsonrpc":"2.0"}`
	r := c.send(c.raw(strings.NewReader(body), int64(len(body))))
	res := r.tool()
	sum := sha256.Sum256(payload)
	if r.status != 200 || res.IsError || res.StructuredContent.SHA256 != hex.EncodeToString(sum[:]) || res.StructuredContent.Key != "late/key.bin" {
		t.Fatalf("%d %.400s", r.status, r.body)
	}
	// A large string that is not a data URI, in any params member, is
	// spooled too and still bounded by the message limit.
	huge := strings.Repeat("x", 5<<20)
	if r := c.callTool("list_blobs", `{"prefix":"`+huge+`"}`); r.status != http.StatusRequestEntityTooLarge {
		t.Fatalf("5 MiB plain string: %d %.200s", r.status, r.body)
	}
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

// TestUploadFileOverSSE: with a progressToken the call answers over SSE and
// runs after the request handler returned; the file it streamed into
// storage must survive until the tool commits it.
func TestUploadFileOverSSE(t *testing.T) {
	parallel(t)
	st := newLocalStore(t)
	c := serveMCP(t, Options{Backend: st}, legacyVersion, `{}`).with(map[string]string{"Accept": "text/event-stream"})
	payload := strings.Repeat("stream me ", 30000)
	params := `{"_meta":{"progressToken":"p1"},"name":"upload_file","arguments":{"key":"sse/a.txt","file":"data:text/plain;base64,` +
		base64.StdEncoding.EncodeToString([]byte(payload)) + `"}}`
	if res, _ := c.events(c.request("tools/call", params)).toolResult(); res.IsError || res.StructuredContent.SHA256 != hexSum([]byte(payload)) {
		t.Fatalf("%+v", res)
	}
}

// TestUploadFileModern: the 2026-07-28 era checks the key argument against
// Mcp-Param-Blob-Key before the tool runs; a mismatch stores nothing.
func TestUploadFileModern(t *testing.T) {
	parallel(t)
	st := newLocalStore(t)
	c := serveMCP(t, Options{Backend: st}, modernVersion, `{}`).with(map[string]string{"Mcp-Param-Blob-Key": "m/ok.txt"})
	payload := bytes.Repeat([]byte("modern "), 20000)
	args := func(key string) string {
		return `{"key":"` + key + `","file":"data:text/plain;base64,` + base64.StdEncoding.EncodeToString(payload) + `"}`
	}
	r := c.callTool("upload_file", args("m/ok.txt"))
	res := r.tool()
	if r.status != 200 || res.IsError || res.ResultType != "complete" || res.StructuredContent.Key != "m/ok.txt" {
		t.Fatalf("%d %.300s", r.status, r.body)
	}
	if r := c.callTool("upload_file", args("m/other.txt")); r.status != http.StatusBadRequest || !bytes.Contains(r.body, []byte("-32020")) {
		t.Fatalf("header mismatch: %d %.300s", r.status, r.body)
	}
	if keys := listAll(t, st); len(keys) != 1 {
		t.Fatalf("stored %v", keys)
	}
	// The stored text reads back (resources/read carries Mcp-Name).
	r = c.readResource(res.StructuredContent.URI)
	var read struct {
		Contents []struct{ URI, Text string }
	}
	if r.status != 200 || json.Unmarshal(r.msg.Result, &read) != nil || len(read.Contents) != 1 ||
		read.Contents[0].URI != res.StructuredContent.URI || read.Contents[0].Text != string(payload) {
		t.Fatalf("resources/read: %d %.300s", r.status, r.body)
	}
}
