package server

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mcpblob/mcpblob/core/blobs"
	"github.com/mcpblob/mcpblob/core/server/front"
	"github.com/mcpblob/mcpblob/storage"
	"github.com/mcpblob/mcpblob/storage/localfs"
)

// sendfileChildEnv names the local store folder a child process serves
// (TestSendfileChild).
const sendfileChildEnv = "MCPBLOB_SENDFILE_CHILD_DIR"

// writeBlob stores size bytes of a repeating pattern under key, without
// holding them in memory, and returns their sha256.
func writeBlob(t testing.TB, b storage.Backend, key, mediaType string, size int64) string {
	t.Helper()
	w, err := b.Create(context.Background(), key, storage.CreateOptions{MediaType: mediaType, Size: size})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort(context.Background())
	chunk := make([]byte, 1<<20)
	for i := range chunk {
		chunk[i] = byte(i*7 + i>>8)
	}
	h := sha256.New()
	for left := size; left > 0; {
		n := min(left, int64(len(chunk)))
		chunk[0] = byte(left >> 20) // vary the chunks a little
		h.Write(chunk[:n])
		if _, err := w.Write(chunk[:n]); err != nil {
			t.Fatal(err)
		}
		left -= n
	}
	if _, err := w.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// TestSendfileChild is the server half of TestSendfileObserved; it runs only
// in the child process.
func TestSendfileChild(t *testing.T) {
	dir := os.Getenv(sendfileChildEnv)
	if dir == "" {
		t.Skip("helper process for TestSendfileObserved")
	}
	b, err := localfs.Open(dir, localfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Options{Backend: b, Front: front.Options{Listen: ln.Addr().String()}})
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve(ln)
	fmt.Printf("ADDR %s\n", ln.Addr())
	io.Copy(io.Discard, os.Stdin) // the parent closes stdin when done
	s.Shutdown(context.Background())
}

// TestSendfileObserved runs the server in a child process under
// `strace -f -e trace=sendfile` and checks that the bytes of a
// resources/stream direct answer, a /d download and a ranged /d download
// from the local store moved through sendfile(2), not through user space.
func TestSendfileObserved(t *testing.T) {
	parallel(t)
	dir := t.TempDir()
	b, err := localfs.Open(dir, localfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	const size = 64 << 20
	want := writeBlob(t, b, "big/blob.bin", "application/octet-stream", size)
	b.Close()
	addr, finish := tracedChild(t, "TestSendfileChild", sendfileChildEnv+"="+dir, "ADDR ")

	c := &bpClient{t: t, base: "http://" + addr, hc: &http.Client{Timeout: time.Minute}}
	r := c.client(legacyVersion, streamCaps).streamResource(blobs.URI("big/blob.bin"))
	if r.status != 200 || r.sum() != want {
		t.Fatalf("resources/stream: %d, %d bytes", r.status, len(r.body))
	}
	link := c.link("big/blob.bin", "")
	if r := c.do("GET", link, nil, nil); r.status != 200 || r.sum() != want {
		t.Fatalf("GET link: %d", r.status)
	}
	if r := c.do("GET", link, nil, map[string]string{"Range": "bytes=1000-"}); r.status != 206 || len(r.body) != size-1000 {
		t.Fatalf("ranged GET: %d, %d bytes", r.status, len(r.body))
	}
	log := finish()
	calls, moved := sendfileMoved(log)
	t.Logf("sendfile: %d calls moved %d bytes (%d expected through it)", calls, moved, 3*size-1000)
	if moved < 3*size-1000 {
		t.Fatalf("sendfile moved %d bytes, want at least %d; strace log:\n%s", moved, 3*size-1000, tail(log, 2000))
	}
}

// TestDownloadMemoryFlat streams a 1 GiB blob through /d, /v1 and
// resources/stream from the local store and through /d from S3 (256 MiB)
// and checks the heap stays flat.
func TestDownloadMemoryFlat(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a 1 GiB blob")
	}
	heapTest(t)
	for _, tc := range []struct {
		be   testBackend
		size int64
	}{{byteplaneBackends()[0], 1 << 30}, {byteplaneBackends()[1], 256 << 20}} {
		t.Run(tc.be.name, func(t *testing.T) {
			b := tc.be.new(t)
			want := writeBlob(t, b, "huge.bin", "application/octet-stream", tc.size)
			c := newBPClient(t, Options{Backend: b, Blobs: blobs.Options{StreamMode: blobs.StreamDirect}})
			link := c.link("huge.bin", "")
			mc := c.client(modernVersion, streamCaps).with(map[string]string{"Accept": "application/json, text/event-stream, */*"})
			get := func(u string) *http.Response {
				resp, err := c.hc.Get(u)
				if err != nil {
					t.Fatal(err)
				}
				return resp
			}
			for _, path := range []string{"/d", "/v1", "resources/stream"} {
				heapGrowth := heapWatch(t)
				start := time.Now()
				var resp *http.Response
				switch path {
				case "/d":
					resp = get(link)
				case "/v1":
					resp = get(c.base + "/v1/blobs/huge.bin")
				default:
					resp = mc.open(mc.request("resources/stream", `{"uri":"blob:///huge.bin"}`))
				}
				h := sha256.New()
				n, err := io.Copy(h, resp.Body)
				resp.Body.Close()
				growth := heapGrowth()
				if err != nil || resp.StatusCode != 200 || n != tc.size || hex.EncodeToString(h.Sum(nil)) != want {
					t.Fatalf("%s: status %d, %d bytes, %v", path, resp.StatusCode, n, err)
				}
				el := time.Since(start)
				t.Logf("%s: %d MiB in %v (%.0f MB/s), heap-in-use growth %.1f MiB", path, n>>20, el.Round(time.Millisecond),
					float64(n)/el.Seconds()/1e6, float64(growth)/(1<<20))
				if growth > 32<<20 {
					t.Errorf("%s: heap grew by %d MiB while streaming %d MiB", path, growth>>20, n>>20)
				}
			}
		})
	}
}

// patternReader yields n bytes of a cheap pattern.
type patternReader struct{ n int64 }

func (p *patternReader) Read(b []byte) (int, error) {
	if p.n <= 0 {
		return 0, io.EOF
	}
	k := min(int64(len(b)), p.n)
	for i := range b[:k] {
		b[i] = byte(p.n - int64(i))
	}
	p.n -= k
	return int(k), nil
}

// TestPutMemoryFlat streams a 1 GiB PUT /v1/blobs body (with x-mcp-sha256
// verification) into the local store and checks the heap stays flat.
func TestPutMemoryFlat(t *testing.T) {
	if testing.Short() {
		t.Skip("uploads 1 GiB")
	}
	const size = 1 << 30
	h := sha256.New()
	io.Copy(h, &patternReader{n: size})
	sum := hex.EncodeToString(h.Sum(nil))
	heapTest(t)
	c := newBPClient(t, Options{Backend: byteplaneBackends()[0].new(t)})
	heapGrowth := heapWatch(t)
	start := time.Now()
	req, _ := http.NewRequest("PUT", c.base+"/v1/blobs/up/huge.bin", &patternReader{n: size})
	req.ContentLength = size
	req.Header.Set("x-mcp-sha256", sum)
	resp, err := c.hc.Do(req)
	growth := heapGrowth()
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 201 || !strings.Contains(string(body), sum) {
		t.Fatalf("PUT 1 GiB: %d %s", resp.StatusCode, body)
	}
	t.Logf("PUT 1 GiB in %v, heap-in-use growth %.1f MiB", time.Since(start).Round(time.Millisecond), float64(growth)/(1<<20))
	if growth > 32<<20 {
		t.Errorf("heap grew by %d MiB during a 1 GiB PUT", growth>>20)
	}
}
