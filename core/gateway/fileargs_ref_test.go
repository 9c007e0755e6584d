package gateway

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpblob/mcpblob/storage/storagetest"
)

// refFileStore is a FileStore on a directory (fileOffloads), its links
// served by the same loopback server (Range requests).
type refFileStore struct {
	*fileOffloads
	ttl atomic.Int64 // the last link's ttl
}

func (s *refFileStore) Link(_ context.Context, principal, id, name string, ttl time.Duration) (string, error) {
	s.ttl.Store(int64(ttl))
	return s.links.URL + "/" + principal + "/" + id + "?n=" + url.QueryEscape(name), nil
}

// refUpstream is a test upstream with one tool, "upload", whose argument
// "file" is x-mcp-file with spec, and one without files, "echo". Its
// tools/call handler reads the (small) body, GETs the file's link whole
// and its bytes 10-19 with Range, and answers the sha256 and size it read,
// the link's query and the range as text; it records the bodies' length
// and framing.
type refUpstream struct {
	*httptest.Server
	calls    atomic.Int64 // tools/call bodies that arrived whole
	lastBody atomic.Value // string
	chunked  atomic.Bool  // the last tools/call body came without a length
}

func newRefUpstream(t *testing.T, spec string) *refUpstream {
	t.Helper()
	u := &refUpstream{}
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if err != nil {
			return
		}
		w.Header().Set("Content-Type", "application/json")
		if bytes.Contains(b, []byte(`"method":"tools/list"`)) {
			io.WriteString(w, `{"jsonrpc":"2.0","id":"mcpblob-gateway-tools-list","result":{"tools":[`+
				`{"name":"upload","inputSchema":{"type":"object","properties":{"note":{"type":"string"},"file":{"type":"string","x-mcp-file":`+spec+`}}}},`+
				`{"name":"echo","inputSchema":{"type":"object","properties":{"text":{"type":"string"}}}}]}}`)
			return
		}
		u.calls.Add(1)
		u.lastBody.Store(string(b))
		u.chunked.Store(r.ContentLength < 0)
		var m struct {
			Params struct {
				Arguments struct {
					File string `json:"file"`
				} `json:"arguments"`
			} `json:"params"`
		}
		_ = json.Unmarshal(b, &m)
		text := fetchFile(m.Params.Arguments.File)
		io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":`+jsonString(text)+`}]}}`)
	}))
	t.Cleanup(u.Server.Close)
	return u
}

func jsonString(s string) string { b, _ := json.Marshal(s); return string(b) }

// fetchFile is what an upstream does with a link: GET it (digest and
// size), GET bytes 10-19 with Range; it describes what it got.
func fetchFile(link string) string {
	if !strings.HasPrefix(link, "http://127.0.0.1:") { // loopback only: never a link the client made up
		return "not a link: " + link[:min(len(link), 40)]
	}
	resp, err := http.Get(link)
	if err != nil {
		return err.Error()
	}
	h := sha256.New()
	n, err := io.Copy(h, resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK {
		return fmt.Sprintf("GET %d %v", resp.StatusCode, err)
	}
	req, _ := http.NewRequest(http.MethodGet, link, nil)
	req.Header.Set("Range", "bytes=10-19")
	rr, err := http.DefaultClient.Do(req)
	if err != nil {
		return err.Error()
	}
	part, _ := io.ReadAll(rr.Body)
	rr.Body.Close()
	q, _ := url.Parse(link)
	return fmt.Sprintf("sha256=%x size=%d range=%d:%x query=%s", h.Sum(nil), n, rr.StatusCode, part, q.RawQuery)
}

func refGateway(t *testing.T, up string) (string, *refFileStore) {
	store := &refFileStore{fileOffloads: newFileOffloads(t)}
	g := newGateway(t, up, func(o *Options) { o.Files.Store = store })
	return serveGateway(t, g).URL, store
}

// A file argument the upstream takes by reference arrives as a link to
// the stored bytes: the upstream's GET (whole and with Range) reads the
// client's bytes, the query names the file's type, size and sha256, and
// the heap stays flat however large the file.
func TestFileByReferenceArrivesAsLinkFlat(t *testing.T) {
	size := int64(256 << 20)
	if testing.Short() || raceEnabled {
		size = 16 << 20
	}
	up := newRefUpstream(t, `{"maxSize":1073741824,"accept":["application/pdf"],"delivery":"reference"}`)
	gw, store := refGateway(t, up.URL)
	want := sha256.New()
	io.Copy(want, pdfPayload(size))
	sum := hex.EncodeToString(want.Sum(nil))
	part := make([]byte, 20)
	io.ReadFull(pdfPayload(size), part)

	heap := storagetest.StartHeapMonitor()
	body, n := callBody("application/pdf", pdfPayload(size), size)
	resp, b := postCall(t, gw, body, n)
	grew := heap.Stop()

	text := fmt.Sprintf("sha256=%s size=%d range=206:%x query=", sum, size, part[10:20])
	if resp.StatusCode != http.StatusOK || !bytes.Contains(b, []byte(text)) {
		t.Fatalf("answer %d %.400s; want the upstream's %q", resp.StatusCode, b, text)
	}
	for _, q := range []string{"name=file", "type=application%2Fpdf", "size=" + itoa(size), "sha256=" + sum} {
		if !bytes.Contains(b, []byte(q)) {
			t.Errorf("the link's query lacks %s: %.400s", q, b)
		}
	}
	last, _ := up.lastBody.Load().(string)
	if up.calls.Load() != 1 || len(last) > 1024 || !up.chunked.Load() ||
		!strings.Contains(last, `"note":"a \"quoted\" note","file":"http`) || !strings.HasSuffix(last, `"}}}`) {
		t.Fatalf("the upstream got %d calls, the last %d bytes (chunked %v): %.300s; want one small body with the link",
			up.calls.Load(), len(last), up.chunked.Load(), last)
	}
	if got := store.ttl.Load(); got != int64(DefaultFileLinkTTL) {
		t.Errorf("link ttl %v; want the default %v", time.Duration(got), DefaultFileLinkTTL)
	}
	if grew > 16<<20 {
		t.Errorf("heap grew %d bytes delivering a %d-byte file by reference; bound 16 MiB", grew, size)
	}
	t.Logf("%d MiB file delivered by reference (upstream body %d bytes); heap grew %.2f MiB",
		size>>20, len(last), float64(grew)/(1<<20))
}

// A bad file delivered by reference is refused -32602 naming the
// argument: nothing stays stored, the upstream gets no call.
func TestFileByReferenceBadFileRefused(t *testing.T) {
	up := newRefUpstream(t, `{"maxSize":1048576,"accept":["application/pdf"],"delivery":"reference"}`)
	gw, store := refGateway(t, up.URL)
	t.Run("over maxSize", func(t *testing.T) {
		size := int64(8 << 20)
		body, n := callBody("application/pdf", pdfPayload(size), size)
		resp, b := postCall(t, gw, body, n)
		fileRefused(t, resp, b, "larger than maxSize 1048576 bytes")
	})
	t.Run("broken base64", func(t *testing.T) {
		body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"upload","arguments":{"file":"data:application/pdf;base64,JVBER!!!"}}}`
		resp, b := post(t, gw, nil, body)
		fileRefused(t, resp, b, "not a valid data URI: bad base64")
	})
	t.Run("not a data URI", func(t *testing.T) {
		body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"upload","arguments":{"file":"https://example.com/x.pdf"}}}`
		resp, b := post(t, gw, nil, body)
		fileRefused(t, resp, b, `not a valid data URI: missing "data:" scheme`)
	})
	t.Run("wrong type", func(t *testing.T) {
		body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"upload","arguments":{"file":"data:image/png;base64,iVBORw0KGgo="}}}`
		resp, b := post(t, gw, nil, body)
		fileRefused(t, resp, b, `media type "image/png" is not accepted`)
	})
	if up.calls.Load() != 0 {
		t.Fatalf("the upstream got %d calls; want none", up.calls.Load())
	}
	if left := store.stored(t); len(left) != 0 {
		t.Fatalf("stored after refusals: %q; want nothing", left)
	}
}

// With a file store, a call of a tool without by-reference arguments
// passes as before, byte for byte with its length; file arguments the
// gateway cannot know as such pass as they are.
func TestFileByReferenceOtherCallsUnchanged(t *testing.T) {
	up := newRefUpstream(t, `{"delivery":"reference"}`)
	gw, store := refGateway(t, up.URL)
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"data:,x"}}}`
	if resp, b := post(t, gw, nil, body); resp.StatusCode != http.StatusOK {
		t.Fatalf("echo: %d %s", resp.StatusCode, b)
	}
	if last, _ := up.lastBody.Load().(string); last != body || up.chunked.Load() {
		t.Fatalf("the upstream got %q (chunked %v); want the client's body with its length", last, up.chunked.Load())
	}
	// Arguments before the name (2025-11-25, no Mcp-Name): not known to be
	// files, forwarded as they are (chunked: the tool has a by-reference
	// argument).
	body = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":{"file":"data:application/pdf;base64,JVBERi0="},"name":"upload"}}`
	post(t, gw, nil, body)
	if last, _ := up.lastBody.Load().(string); last != body {
		t.Fatalf("the upstream got %q; want the client's body", last)
	}
	if left := store.stored(t); len(left) != 0 {
		t.Fatalf("stored: %q; want nothing", left)
	}
}

// failingFiles is a FileStore whose writes fail.
type failingFiles struct{ *refFileStore }

func (f failingFiles) Create(context.Context, string, string, string) (OffloadWriter, error) {
	return failingWriter{}, nil
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }
func (failingWriter) Commit(context.Context) (OffloadInfo, error) {
	return OffloadInfo{}, errors.New("disk full")
}
func (failingWriter) Abort() {}

// A store that fails is the gateway's failure: -32603 naming the
// argument, HTTP 500, and the upstream gets no call.
func TestFileByReferenceStoreFailure(t *testing.T) {
	up := newRefUpstream(t, `{"delivery":"reference"}`)
	store := failingFiles{&refFileStore{fileOffloads: newFileOffloads(t)}}
	gw := serveGateway(t, newGateway(t, up.URL, func(o *Options) { o.Files.Store = store })).URL
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"upload","arguments":{"file":"data:text/plain;base64,aGVsbG8="}}}`
	resp, b := post(t, gw, nil, body)
	code, msg, _ := rpcErr(t, b)
	if resp.StatusCode != http.StatusInternalServerError || code != -32603 || !strings.Contains(msg, `Argument "file": the gateway could not store the file`) {
		t.Fatalf("answer %d %s; want 500, -32603 naming the argument", resp.StatusCode, b)
	}
	if up.calls.Load() != 0 {
		t.Fatalf("the upstream got %d calls; want none", up.calls.Load())
	}
}
