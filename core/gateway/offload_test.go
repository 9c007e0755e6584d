package gateway

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpblob/mcpblob/core/gateway/blobdecode"
	"github.com/mcpblob/mcpblob/storage/storagetest"
)

// fileOffloads is an OffloadStore on a directory, one subdirectory per
// principal; its links are served by a loopback server (ServeContent:
// Range requests).
type fileOffloads struct {
	dir   string
	links *httptest.Server
	mu    sync.Mutex
	types map[string]string
}

func newFileOffloads(t *testing.T) *fileOffloads {
	f := &fileOffloads{dir: t.TempDir(), types: map[string]string{}}
	f.links = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		file, err := os.Open(filepath.Join(f.dir, filepath.FromSlash(strings.TrimPrefix(r.URL.Path, "/"))))
		if err != nil {
			http.NotFound(w, r)
			return
		}
		defer file.Close()
		http.ServeContent(w, r, "", time.Time{}, file)
	}))
	t.Cleanup(f.links.Close)
	return f
}

func (f *fileOffloads) path(principal, id string) string { return filepath.Join(f.dir, principal, id) }

func (f *fileOffloads) Create(_ context.Context, principal, id, mediaType string) (OffloadWriter, error) {
	if err := os.MkdirAll(filepath.Join(f.dir, principal), 0o700); err != nil {
		return nil, err
	}
	tmp, err := os.CreateTemp(f.dir, "part-")
	if err != nil {
		return nil, err
	}
	return &fileOffload{f: f, tmp: tmp, dst: f.path(principal, id), mediaType: mediaType}, nil
}

func (f *fileOffloads) Open(_ context.Context, principal, id string) (io.ReadCloser, OffloadInfo, error) {
	file, err := os.Open(f.path(principal, id))
	if err != nil {
		return nil, OffloadInfo{}, fmt.Errorf("%w: %v", ErrOffloadNotFound, err)
	}
	st, _ := file.Stat()
	return file, f.info(principal, id, st.Size()), nil
}

func (f *fileOffloads) Link(_ context.Context, principal, id string) (string, OffloadInfo, error) {
	st, err := os.Stat(f.path(principal, id))
	if err != nil {
		return "", OffloadInfo{}, fmt.Errorf("%w: %v", ErrOffloadNotFound, err)
	}
	return f.links.URL + "/" + principal + "/" + id, f.info(principal, id, st.Size()), nil
}

func (f *fileOffloads) Delete(_ context.Context, principal, id string) error {
	return os.Remove(f.path(principal, id))
}

func (f *fileOffloads) info(principal, id string, size int64) OffloadInfo {
	f.mu.Lock()
	defer f.mu.Unlock()
	return OffloadInfo{Size: size, MediaType: f.types[principal+"/"+id]}
}

// stored lists the committed blobs and the parts left behind.
func (f *fileOffloads) stored(t *testing.T) []string {
	var names []string
	filepath.WalkDir(f.dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			names = append(names, strings.TrimPrefix(p, f.dir))
		}
		return nil
	})
	return names
}

type fileOffload struct {
	f         *fileOffloads
	tmp       *os.File
	dst       string
	mediaType string
	done      bool
}

func (w *fileOffload) Write(p []byte) (int, error) { return w.tmp.Write(p) }

func (w *fileOffload) Commit(context.Context) (OffloadInfo, error) {
	st, _ := w.tmp.Stat()
	w.tmp.Close()
	w.done = true
	if err := os.Rename(w.tmp.Name(), w.dst); err != nil {
		return OffloadInfo{}, err
	}
	rel, _ := filepath.Rel(w.f.dir, w.dst)
	w.f.mu.Lock()
	w.f.types[filepath.ToSlash(rel)] = w.mediaType
	w.f.mu.Unlock()
	return OffloadInfo{Size: st.Size(), MediaType: w.mediaType}, nil
}

func (w *fileOffload) Abort() {
	if !w.done {
		w.tmp.Close()
		os.Remove(w.tmp.Name())
		w.done = true
	}
}

// toolUpstream answers tools/call: the tool named in params.name returns
// a text and an image of size pattern bytes (data before mimeType, as the
// official SDKs write it), in JSON or, for names ending in "_sse", in an
// SSE event after a progress notification. "broken" puts a non-base64
// byte 3 MiB into the image, "truncated" ends the body there.
func toolUpstream(t *testing.T, size int64) *httptest.Server {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Params struct {
				Name string `json:"name"`
			} `json:"params"`
		}
		body, _ := io.ReadAll(r.Body)
		json.Unmarshal(body, &m)
		name, sse := strings.CutSuffix(m.Params.Name, "_sse")
		if sse {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "id: 7\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progress\":1}}\n\nid: 8\ndata: ")
		} else {
			w.Header().Set("Content-Type", "application/json")
		}
		n := size
		if name == "small" {
			n = 1 << 10
		}
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"here"},`, m.ID)
		if name == "twobroken" { // a good image first, then a broken one
			io.WriteString(w, `{"type":"image","data":"`)
			enc := base64.NewEncoder(base64.StdEncoding, w)
			io.Copy(enc, &patternReader{n: 2 << 20})
			enc.Close()
			io.WriteString(w, `","mimeType":"image/png"},`)
			name = "broken"
		}
		io.WriteString(w, `{"type":"image","data":"`)
		cw := &corrupter{w: w}
		if name == "broken" {
			cw.at = 3 << 20
		}
		enc := base64.NewEncoder(base64.StdEncoding, cw)
		src := io.Reader(&patternReader{n: n})
		if name == "truncated" {
			src = io.LimitReader(src, 3<<20)
		}
		io.CopyBuffer(enc, src, make([]byte, 48<<10))
		if name == "truncated" {
			return
		}
		enc.Close()
		io.WriteString(w, `","mimeType":"image/png"}],"isError":false}}`)
		if sse {
			io.WriteString(w, "\n\n")
		}
	}))
	t.Cleanup(up.Close)
	return up
}

// serveAs serves g with the principal of the X-Test-Principal header.
func serveAs(t *testing.T, g *Gateway) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		nw := &netHTTPWriter{w: w}
		req := &Request{Method: r.Method, Header: r.Header, ContentLength: r.ContentLength,
			Principal: r.Header.Get("X-Test-Principal"), Context: r.Context()}
		req.Body = r.Body
		g.ServeMCP(req, nw)
		nw.finish()
	}))
	t.Cleanup(srv.Close)
	return srv
}

func offloadGateway(t *testing.T, size int64) (string, *fileOffloads) {
	store := newFileOffloads(t)
	g := newGateway(t, toolUpstream(t, size).URL, func(o *Options) {
		o.Offload = OffloadOptions{Over: 1 << 20, Store: store}
	})
	return serveAs(t, g).URL, store
}

func callTool(t *testing.T, gw, principal, name string) (*http.Response, []byte) {
	return post(t, gw, map[string]string{"X-Test-Principal": principal, "Mcp-Method": "tools/call"},
		`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"`+name+`","arguments":{}}}`)
}

type toolAnswer struct {
	Result struct {
		Content []struct {
			Type, URI, Name, MimeType, Text, Data string
			Size                                  int64
		} `json:"content"`
	} `json:"result"`
}

// linkOf reads the resource_link the image became.
func linkOf(t *testing.T, b []byte) (uri string, size int64) {
	t.Helper()
	var a toolAnswer
	if err := json.Unmarshal(b, &a); err != nil || len(a.Result.Content) != 2 {
		t.Fatalf("not a tool result with two contents (%v): %.300s", err, b)
	}
	c := a.Result.Content[1]
	if a.Result.Content[0].Text != "here" || c.Type != "resource_link" || !strings.HasPrefix(c.URI, OffloadURIPrefix) || c.MimeType != "image/png" || c.Name == "" {
		t.Fatalf("the image is not a resource_link to the gateway: type %q, uri %q, name %q, mimeType %q, %d bytes of data",
			c.Type, c.URI, c.Name, c.MimeType, len(c.Data))
	}
	return c.URI, c.Size
}

func patternSum(n int64) string {
	h := sha256.New()
	io.Copy(h, &patternReader{n: n})
	return fmt.Sprintf("%x", h.Sum(nil))
}

// readBack reads uri through the gateway's resources/read as principal,
// decoding the answer as it arrives; it returns the sha256 and size.
func readBack(t *testing.T, gw, principal, uri string) (string, int64, error) {
	req, _ := http.NewRequest(http.MethodPost, gw+"/mcp", strings.NewReader(
		`{"jsonrpc":"2.0","id":6,"method":"resources/read","params":{"uri":"`+uri+`"}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Test-Principal", principal)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	h := sha256.New()
	res, err := blobdecode.Decode(resp.Body, resp.Header.Get("Content-Type"), json.RawMessage("6"), h, blobdecode.Options{})
	return fmt.Sprintf("%x", h.Sum(nil)), res.Written, err
}

func TestOffloadLargeImage(t *testing.T) {
	size := int64(64 << 20) // G3
	if testing.Short() || raceEnabled {
		size = 8 << 20
	}
	for _, tool := range []string{"image", "image_sse"} {
		gw, store := offloadGateway(t, size)
		heap := storagetest.StartHeapMonitor()
		resp, b := callTool(t, gw, "alice", tool)
		grew := heap.Stop()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: status %d: %.300s", tool, resp.StatusCode, b)
		}
		if tool == "image_sse" {
			want := "id: 7\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progress\":1}}\n\nid: 8\ndata: "
			if !bytes.HasPrefix(b, []byte(want)) || !bytes.HasSuffix(b, []byte("\n\n")) {
				t.Fatalf("the SSE stream is not the upstream's around the answer: %.300q", b)
			}
			b = bytes.TrimSuffix(bytes.TrimPrefix(b, []byte(want)), []byte("\n\n"))
		}
		uri, n := linkOf(t, b)
		if n != size || grew > 32<<20 {
			t.Errorf("%s: link size %d, want %d; heap grew %d bytes offloading it, bound 32 MiB", tool, n, size, grew)
		}
		t.Logf("%s: %d MiB image offloaded, heap grew %.2f MiB, answer %d bytes", tool, size>>20, float64(grew)/(1<<20), len(b))

		heap = storagetest.StartHeapMonitor()
		sum, got, err := readBack(t, gw, "alice", uri)
		grew = heap.Stop()
		if err != nil || got != size || sum != patternSum(size) {
			t.Fatalf("%s: resources/read gave %d bytes (%v), sha256 %s: not the upstream's image", tool, got, err, sum)
		}
		t.Logf("%s: read back through resources/read, heap grew %.2f MiB", tool, float64(grew)/(1<<20))
		if grew > 32<<20 {
			t.Errorf("%s: heap grew %d bytes reading back; bound 32 MiB", tool, grew)
		}
		checkStreamed(t, gw, uri, size)
		if len(store.stored(t)) != 1 {
			t.Errorf("%s: stored %v, want the one image", tool, store.stored(t))
		}
	}
}

// checkStreamed reads uri through resources/stream's downloadUrl, whole
// and by a range.
func checkStreamed(t *testing.T, gw, uri string, size int64) {
	t.Helper()
	_, b := post(t, gw, map[string]string{"X-Test-Principal": "alice"},
		`{"jsonrpc":"2.0","id":9,"method":"resources/stream","params":{"uri":"`+uri+`"}}`)
	var a struct {
		Result struct {
			URI, DownloadURL, MimeType string
			Size                       int64
		} `json:"result"`
	}
	if json.Unmarshal(b, &a) != nil || a.Result.DownloadURL == "" || a.Result.Size != size || a.Result.URI != uri {
		t.Fatalf("resources/stream: %.300s", b)
	}
	resp, err := http.Get(a.Result.DownloadURL)
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.New()
	n, err := io.Copy(h, resp.Body)
	resp.Body.Close()
	if err != nil || n != size || fmt.Sprintf("%x", h.Sum(nil)) != patternSum(size) {
		t.Errorf("resources/stream download: %d bytes (%v), not the upstream's image", n, err)
	}
}

func TestOffloadSmallStaysInline(t *testing.T) {
	gw, store := offloadGateway(t, 0)
	up := toolUpstream(t, 0).URL
	for _, tool := range []string{"small", "small_sse"} {
		_, b := callTool(t, gw, "alice", tool)
		_, want := post(t, up, nil, `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"`+tool+`","arguments":{}}}`)
		if !bytes.Equal(b, want) || !bytes.Contains(b, []byte(`"type":"image","data":"`)) {
			t.Errorf("%s: a 1 KiB image did not pass byte for byte:\n got %.200q\nwant %.200q", tool, b, want)
		}
	}
	if s := store.stored(t); len(s) != 0 {
		t.Errorf("small blobs stored: %v", s)
	}
}

func TestOffloadBrokenBlob(t *testing.T) {
	for _, tool := range []string{"broken", "truncated", "twobroken", "broken_sse", "truncated_sse", "twobroken_sse"} {
		gw, store := offloadGateway(t, 8<<20)
		resp, b := callTool(t, gw, "alice", tool)
		if strings.HasSuffix(tool, "_sse") {
			i := bytes.LastIndex(b, []byte("data: "))
			if resp.StatusCode != http.StatusOK || i < 0 {
				t.Fatalf("%s: %d %.300q", tool, resp.StatusCode, b)
			}
			b = bytes.TrimSpace(b[i+len("data: "):])
		} else if resp.StatusCode != http.StatusBadGateway {
			t.Errorf("%s: status %d, want 502", tool, resp.StatusCode)
		}
		code, msg, kind := rpcErr(t, b)
		var m struct{ ID int }
		json.Unmarshal(b, &m)
		if code != -32603 || m.ID != 5 || (kind != kindMalformed && kind != kindBroken) {
			t.Errorf("%s: error %d %q (%s) for id %d; want -32603 naming the upstream's answer, id 5", tool, code, msg, kind, m.ID)
		}
		if s := store.stored(t); len(s) != 0 {
			t.Errorf("%s: stored %v after a broken blob; want nothing", tool, s)
		}
	}
}

func TestOffloadOtherPrincipal(t *testing.T) {
	gw, _ := offloadGateway(t, 2<<20)
	_, b := callTool(t, gw, "alice", "image")
	uri, _ := linkOf(t, b)
	if _, _, err := readBack(t, gw, "bob", uri); !isNotFound(err) {
		t.Errorf("bob read alice's offloaded image: %v; want resource not found", err)
	}
	_, b = post(t, gw, map[string]string{"X-Test-Principal": "bob"},
		`{"jsonrpc":"2.0","id":9,"method":"resources/stream","params":{"uri":"`+uri+`"}}`)
	if code, _, _ := rpcErr(t, b); code != -32002 {
		t.Errorf("bob's resources/stream of alice's image: %.200s; want -32002", b)
	}
	if _, n, err := readBack(t, gw, "alice", uri); err != nil || n != 2<<20 {
		t.Errorf("alice's own read: %d bytes, %v", n, err)
	}
}

func isNotFound(err error) bool {
	var rpc *blobdecode.RPCError
	return errors.As(err, &rpc) && rpc.Code == -32002
}

// An offloaded blob's URI spelled with JSON escapes is still the
// gateway's to answer (the quick look for the URI prefix must not send it
// to the upstream), and a read of another URI goes to the upstream.
func TestOffloadReadEscapedURI(t *testing.T) {
	const size = 2 << 20
	gw, _ := offloadGateway(t, size)
	resp, b := callTool(t, gw, "alice", "image")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %.300s", resp.StatusCode, b)
	}
	uri, _ := linkOf(t, b)
	escaped := strings.ReplaceAll(uri, "/", `\/`)
	sum, got, err := readBack(t, gw, "alice", escaped)
	if err != nil || got != size || sum != patternSum(size) {
		t.Fatalf("resources/read of %s gave %d bytes (%v): not the offloaded image", escaped, got, err)
	}
}
