package gateway

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcpblob/mcpblob/storage/storagetest"
)

// fileUpstream is a test upstream with one tool, "upload", whose argument
// "file" is x-mcp-file with spec. Its tools/call handler reads the body as
// it arrives (flat memory), decodes the data URI's base64 into a sha256 and
// answers the digest as text; it counts the tools/call bodies that arrived
// whole and the bytes of every tools/call body.
type fileUpstream struct {
	*httptest.Server
	lists    atomic.Int64 // tools/list calls
	complete atomic.Int64 // tools/call bodies that arrived whole
	received atomic.Int64 // tools/call body bytes received
	status   int          // when set, tools/call is answered this status, body unread
	lastList atomic.Value // the last tools/list request: listSeen
}

// listSeen is what the upstream saw of a tools/list request.
type listSeen struct {
	header http.Header
	body   string
}

func newFileUpstream(t *testing.T, spec string) *fileUpstream {
	t.Helper()
	u := &fileUpstream{}
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		br := bufio.NewReaderSize(r.Body, 4<<10)
		head, _ := br.Peek(200)
		if bytes.Contains(head, []byte(`"method":"tools/list"`)) {
			u.lists.Add(1)
			b, _ := io.ReadAll(br)
			u.lastList.Store(listSeen{header: r.Header.Clone(), body: string(b)})
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"jsonrpc":"2.0","id":"mcpblob-gateway-tools-list","result":{"tools":[`+
				`{"name":"upload","inputSchema":{"type":"object","properties":{"note":{"type":"string"},"file":{"type":"string","x-mcp-file":`+spec+`}}}},`+
				`{"name":"echo","inputSchema":{"type":"object","properties":{"text":{"type":"string"}}}}]}}`)
			return
		}
		if u.status != 0 {
			http.Error(w, "request entity too large", u.status)
			return
		}
		digest, ok := u.readCall(br)
		if !ok {
			return // a body cut short: nothing to answer
		}
		u.complete.Add(1)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"`+digest+`"}]}}`)
	}))
	t.Cleanup(u.Server.Close)
	return u
}

// readCall reads a body shaped as callBody writes it: the sha256 of the
// file's decoded bytes, and whether the body arrived whole.
func (u *fileUpstream) readCall(br *bufio.Reader) (string, bool) {
	counted := &countReader{r: br, n: &u.received}
	cr := bufio.NewReaderSize(counted, 4<<10)
	if _, err := cr.ReadString(','); err != nil { // through "data:…;base64,"
		return "", false
	}
	for { // the data URI's header ends at the first ',' after "data:"
		s, err := cr.ReadString(',')
		if err != nil {
			return "", false
		}
		if strings.Contains(s, "base64") {
			break
		}
	}
	h := sha256.New()
	if _, err := io.Copy(h, base64.NewDecoder(base64.StdEncoding, &untilQuote{r: cr})); err != nil {
		return "", false
	}
	rest, err := io.ReadAll(cr)
	if err != nil || string(rest) != `}}}` {
		return "", false
	}
	return hex.EncodeToString(h.Sum(nil)), true
}

type countReader struct {
	r io.Reader
	n *atomic.Int64
}

func (c *countReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// untilQuote reads up to (and consumes) the next '"'.
type untilQuote struct {
	r    *bufio.Reader
	done bool
}

func (q *untilQuote) Read(p []byte) (int, error) {
	if q.done {
		return 0, io.EOF
	}
	n := 0
	for n < len(p) {
		c, err := q.r.ReadByte()
		if err != nil {
			return n, io.ErrUnexpectedEOF
		}
		if c == '"' {
			q.done = true
			return n, nil
		}
		p[n] = c
		n++
	}
	return n, nil
}

// callBody is a tools/call of "upload" whose file is a data URI of
// mediaType over payload (size bytes), its base64 encoded as it is read.
func callBody(mediaType string, payload io.Reader, size int64) (io.Reader, int64) {
	prefix := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"upload","arguments":{"note":"a \"quoted\" note","file":"data:` +
		strings.ReplaceAll(mediaType, "/", `\/`) + `;base64,`
	suffix := `"}}}`
	pr, pw := io.Pipe()
	go func() {
		enc := base64.NewEncoder(base64.StdEncoding, pw)
		_, err := io.CopyBuffer(enc, payload, make([]byte, 48<<10))
		if err == nil {
			err = enc.Close()
		}
		pw.CloseWithError(err)
	}()
	n := int64(len(prefix) + base64.StdEncoding.EncodedLen(int(size)) + len(suffix))
	return io.MultiReader(strings.NewReader(prefix), pr, strings.NewReader(suffix)), n
}

// postCall posts body (n bytes) to the gateway and returns the answer.
func postCall(t *testing.T, gw string, body io.Reader, n int64) (*http.Response, []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, gw+"/mcp", body)
	req.ContentLength = n
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading the answer: %v", err)
	}
	return resp, b
}

// pdfPayload yields size bytes that sniff as a PDF.
func pdfPayload(size int64) io.Reader {
	return io.MultiReader(strings.NewReader("%PDF-1.7\n"), &patternReader{n: size - 9})
}

// fileRefused checks b is the -32602 refusal of argument "file" saying want.
func fileRefused(t *testing.T, resp *http.Response, b []byte, want string) {
	t.Helper()
	var m struct {
		Error struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
			Data    struct {
				Argument string `json:"argument"`
			} `json:"data"`
		} `json:"error"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("not a JSON-RPC answer: %q", b)
	}
	if resp.StatusCode != http.StatusOK || m.Error.Code != -32602 || m.Error.Data.Argument != "file" ||
		!strings.Contains(m.Error.Message, `"file"`) || !strings.Contains(m.Error.Message, want) {
		t.Fatalf("answer %d %s; want -32602 naming argument \"file\" and %q", resp.StatusCode, b, want)
	}
}

func TestFileArgGoodArrivesByteForByteFlat(t *testing.T) {
	size := int64(256 << 20)
	if testing.Short() || raceEnabled {
		size = 16 << 20
	}
	up := newFileUpstream(t, `{"maxSize":1073741824,"accept":["application/pdf"]}`)
	gw := serveGateway(t, newGateway(t, up.URL, nil)).URL
	want := sha256.New()
	io.Copy(want, pdfPayload(size))
	heap := storagetest.StartHeapMonitor()
	body, n := callBody("application/pdf", pdfPayload(size), size)
	resp, b := postCall(t, gw, body, n)
	grew := heap.Stop()
	if resp.StatusCode != http.StatusOK || !bytes.Contains(b, []byte(hex.EncodeToString(want.Sum(nil)))) {
		t.Fatalf("answer %d %.300s; want the upstream's digest of the file's %d bytes", resp.StatusCode, b, size)
	}
	if up.complete.Load() != 1 || up.received.Load() != n || up.lists.Load() != 1 {
		t.Fatalf("upstream: %d whole calls, %d of %d bytes, %d tools/list; want 1, all, 1",
			up.complete.Load(), up.received.Load(), n, up.lists.Load())
	}
	if grew > 16<<20 {
		t.Errorf("heap grew %d bytes checking a %d-byte file; bound 16 MiB", grew, size)
	}
	t.Logf("%d MiB file checked and relayed; heap grew %.2f MiB", size>>20, float64(grew)/(1<<20))
}

func TestFileArgOverMaxSizeRefusedBeforeTheRest(t *testing.T) {
	up := newFileUpstream(t, `{"maxSize":1048576}`)
	gw := serveGateway(t, newGateway(t, up.URL, nil)).URL
	size := int64(32 << 20)
	body, n := callBody("application/pdf", pdfPayload(size), size)
	resp, b := postCall(t, gw, body, n)
	fileRefused(t, resp, b, "larger than maxSize 1048576 bytes")
	if up.complete.Load() != 0 {
		t.Fatalf("the upstream got %d whole requests; want none", up.complete.Load())
	}
	// The upstream got at most the file's first MiB (in base64) and what
	// the buffers between hold, never the rest of the 43 MiB body.
	if got := up.received.Load(); got > 4<<20 {
		t.Errorf("the upstream received %d of %d bytes; want the body cut near maxSize", got, n)
	}
	t.Logf("the upstream received %d of the %d-byte body", up.received.Load(), n)
}

func TestFileArgWrongTypeRefused(t *testing.T) {
	up := newFileUpstream(t, `{"accept":["application/pdf",".pdf"]}`)
	gw := serveGateway(t, newGateway(t, up.URL, nil)).URL
	size := int64(4 << 20)
	t.Run("declared", func(t *testing.T) {
		body, n := callBody("image/png", pdfPayload(size), size)
		resp, b := postCall(t, gw, body, n)
		fileRefused(t, resp, b, `media type "image/png" is not accepted (accept: application/pdf, .pdf)`)
	})
	t.Run("sniffed", func(t *testing.T) {
		png := io.MultiReader(strings.NewReader("\x89PNG\x0D\x0A\x1A\x0A"), &patternReader{n: size - 8})
		body, n := callBody("application/pdf", png, size)
		resp, b := postCall(t, gw, body, n)
		fileRefused(t, resp, b, "content is image/png, which is not accepted")
	})
	if up.complete.Load() != 0 {
		t.Fatalf("the upstream got %d whole requests; want none", up.complete.Load())
	}
}

// A tool without file arguments passes untouched; the tools/list behind
// the checks runs once per tool and FileSpecTTL.
func TestFileArgToolListFetchedOncePerTTL(t *testing.T) {
	up := newFileUpstream(t, `{"maxSize":10}`)
	gw := serveGateway(t, newGateway(t, up.URL, nil)).URL
	for range 3 {
		body, n := callBody("application/pdf", pdfPayload(10), 10)
		if resp, b := postCall(t, gw, body, n); resp.StatusCode != http.StatusOK || bytes.Contains(b, []byte(`"error"`)) {
			t.Fatalf("a file within maxSize: %d %s", resp.StatusCode, b)
		}
	}
	if up.lists.Load() != 1 || up.complete.Load() != 3 {
		t.Fatalf("%d tools/list, %d whole calls; want 1 and 3", up.lists.Load(), up.complete.Load())
	}
}

func TestUpstreamBodyLimitNamed(t *testing.T) {
	up := newFileUpstream(t, `{}`)
	up.status = http.StatusRequestEntityTooLarge
	gw := serveGateway(t, newGateway(t, up.URL, nil)).URL
	size := int64(6 << 20)
	body, n := callBody("application/pdf", pdfPayload(size), size)
	resp, b := postCall(t, gw, body, n)
	code, msg, kind := rpcErr(t, b)
	if resp.StatusCode != http.StatusRequestEntityTooLarge || code != -32603 || kind != kindBodyLimit ||
		!strings.Contains(msg, "refused a request body of "+itoa(n)+" bytes") || !strings.Contains(msg, "Go SDKs accept 4 MiB") {
		t.Fatalf("answer %d %s; want 413 naming the upstream's body limit", resp.StatusCode, b)
	}
}

// In the 2026-07-28 era the tool is named by Mcp-Name before the body, so
// arguments written before params.name are checked too; the gateway's
// tools/list goes in the caller's era.
func TestFileArgModernEraNamedByHeader(t *testing.T) {
	up := newFileUpstream(t, `{"accept":["application/pdf"]}`)
	gw := serveGateway(t, newGateway(t, up.URL, nil)).URL
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	body := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"arguments":{"file":"data:image/png;base64,iVBORw0KGgo="},"name":"upload",` + meta + `}}`
	resp, b := post(t, gw, map[string]string{"Mcp-Method": "tools/call", "Mcp-Name": "upload", "MCP-Protocol-Version": "2026-07-28"}, body)
	fileRefused(t, resp, b, `media type "image/png" is not accepted`)
	seen, _ := up.lastList.Load().(listSeen)
	if seen.header.Get("Mcp-Method") != "tools/list" || seen.header.Get("MCP-Protocol-Version") != "2026-07-28" ||
		!strings.Contains(seen.body, `"io.modelcontextprotocol/protocolVersion":"2026-07-28"`) {
		t.Fatalf("the gateway's tools/list: headers %v, body %s; want the caller's era", seen.header, seen.body)
	}
	if up.complete.Load() != 0 {
		t.Fatal("the upstream got the whole request")
	}
}
