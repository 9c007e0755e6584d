package gateway

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcpblob/mcpblob/core/codec"
	"github.com/mcpblob/mcpblob/storage/storagetest"
)

// uploadedFiles is a FileOpener with one file, alice's
// "mcp-file://gw.test/alices" (a PDF of size bytes, generated as read),
// and one not uploaded yet.
type uploadedFiles struct{ size int64 }

func (u uploadedFiles) OpenFile(_ context.Context, principal, uri string) (OpenedFile, error) {
	switch {
	case uri == "mcp-file://gw.test/pending" && principal == "alice":
		return OpenedFile{}, &FileURIError{Reason: "uploadIncomplete", Problem: "the file's bytes have not been uploaded yet"}
	case uri != "mcp-file://gw.test/alices" || principal != "alice":
		return OpenedFile{}, &FileURIError{Reason: "fileNotFound", Problem: "no such file (a file URI is its uploader's only)"}
	}
	return OpenedFile{MediaType: "application/pdf", Size: u.size, Body: io.NopCloser(pdfPayload(u.size))}, nil
}

// inlineUpstream is a test upstream whose tool "upload" takes its "file"
// inline only (x-mcp-file without transferModes): its tools/call handler
// reads the data URI as it streams, never whole, and answers its type,
// size and sha256.
type inlineUpstream struct {
	*httptest.Server
	calls    atomic.Int64 // tools/call requests that reached the tool
	requests atomic.Int64 // tools/call requests begun (their headers arrived)
}

func newInlineUpstream(t *testing.T) *inlineUpstream {
	u := &inlineUpstream{}
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		br := bufio.NewReaderSize(r.Body, 4<<10)
		head, _ := br.Peek(200)
		w.Header().Set("Content-Type", "application/json")
		if bytes.Contains(head, []byte(`"method":"tools/list"`)) {
			var m struct{ ID json.RawMessage }
			b, _ := io.ReadAll(br)
			_ = json.Unmarshal(b, &m) // head was only peeked
			io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(m.ID)+`,"result":{"tools":[`+
				`{"name":"upload","inputSchema":{"type":"object","properties":{"note":{"type":"string"},"file":{"type":"string","x-mcp-file":{"accept":["application/pdf"]}}}}},`+
				`{"name":"own","inputSchema":{"type":"object","properties":{"file":{"type":"string","x-mcp-file":{"transferModes":["upload"]}}}}}]}}`)
			return
		}
		u.requests.Add(1)
		text := readFileArg(br)
		if strings.HasPrefix(text, "type=") {
			u.calls.Add(1)
		}
		io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":`+jsonString(text)+`}]}}`)
	}))
	t.Cleanup(u.Server.Close)
	return u
}

// readFileArg reads a tools/call body up to its "file" argument and
// decodes the data URI there as it streams, hashing it.
func readFileArg(br *bufio.Reader) string {
	for {
		if _, err := br.ReadString('"'); err != nil {
			return "no file argument"
		}
		if b, _ := br.Peek(7); string(b) == `file":"` {
			br.Discard(7)
			break
		}
	}
	dr, err := codec.NewDataURIReader(&untilQuote{r: br})
	if err != nil {
		return "not a data URI: " + err.Error()
	}
	h := sha256.New()
	n, err := dr.WriteTo(h)
	if err != nil {
		return err.Error()
	}
	return fmt.Sprintf("type=%s size=%d sha256=%x", dr.Header.MediaType, n, h.Sum(nil))
}

func expandGateway(t *testing.T, size int64) (gw string, up *inlineUpstream) {
	up = newInlineUpstream(t)
	g := newGateway(t, up.URL, func(o *Options) { o.Files.Opener = uploadedFiles{size: size} })
	return serveGateway(t, g).URL, up
}

const uriCall = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"upload","arguments":{"note":"n","file":"%s"}}}`

// An uploaded file's mcp-file URI reaches an inline-only upstream as a
// data URI of the same bytes, encoded from the store as the body streams:
// the gateway's heap stays flat.
func TestFileURIExpandedToDataURIFlat(t *testing.T) {
	size := int64(64 << 20)
	gw, up := expandGateway(t, size)
	want := sha256.New()
	io.Copy(want, pdfPayload(size))

	heap := storagetest.StartHeapMonitor()
	resp, b := post(t, gw, nil, fmt.Sprintf(uriCall, "mcp-file://gw.test/alices"))
	grew := heap.Stop()

	text := fmt.Sprintf("type=application/pdf size=%d sha256=%s", size, hex.EncodeToString(want.Sum(nil)))
	if resp.StatusCode != http.StatusOK || !bytes.Contains(b, []byte(text)) || up.calls.Load() != 1 {
		t.Fatalf("answer %d %.300s (%d calls); want the upstream's %q", resp.StatusCode, b, up.calls.Load(), text)
	}
	t.Logf("%d MiB file expanded into a data URI; heap grew %.2f MiB", size>>20, float64(grew)/(1<<20))
	if grew > 8<<20 {
		t.Errorf("heap grew %d bytes expanding a %d MiB file; bound 8 MiB", grew, size>>20)
	}
}

// Another principal's file, an unknown one and one not uploaded are
// refused -32602 naming the argument, with docs/files.md's reason, and
// the tool is never called; a tool whose upstream takes file URIs itself
// gets the URI as it is.
func TestFileURIRefusedNothingForwarded(t *testing.T) {
	gw, up := expandGateway(t, 1<<20)
	for _, c := range []struct{ who, uri, reason string }{
		{"bob", "mcp-file://gw.test/alices", "fileNotFound"},
		{"alice", "mcp-file://gw.test/nope", "fileNotFound"},
		{"alice", "mcp-file://gw.test/pending", "uploadIncomplete"},
	} {
		resp, b := post(t, gw, map[string]string{"X-Principal": c.who}, fmt.Sprintf(uriCall, c.uri))
		fileRefused(t, resp, b, "")
		var m struct {
			Error struct{ Data struct{ Reason string } }
		}
		_ = json.Unmarshal(b, &m)
		if m.Error.Data.Reason != c.reason {
			t.Errorf("%s %s: data.reason %q; want %q", c.who, c.uri, m.Error.Data.Reason, c.reason)
		}
	}
	if up.calls.Load() != 0 || up.requests.Load() != 0 {
		t.Fatalf("the upstream got %d requests, its tool ran %d times; want none", up.requests.Load(), up.calls.Load())
	}
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"own","arguments":{"file":"mcp-file://gw.test/alices"}}}`
	if _, b := post(t, gw, nil, body); !bytes.Contains(b, []byte(`not a data URI`)) {
		t.Errorf("a tool taking uploads got %s; want the URI as it was", b)
	}
}

// The gateway's tools/list answer advertises transferModes
// ["inline","upload"] on the inline-only file arguments, not on those
// whose upstream takes uploads itself.
func TestToolsListAdvertisesUpload(t *testing.T) {
	gw, _ := expandGateway(t, 1)
	resp, b := post(t, gw, nil, `{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{}}`)
	var m struct {
		ID     int
		Result struct {
			Tools []struct {
				Name        string
				InputSchema struct {
					Properties map[string]struct {
						File *struct {
							Accept        []string `json:"accept"`
							TransferModes []string `json:"transferModes"`
						} `json:"x-mcp-file"`
					}
				}
			}
		}
	}
	if err := json.Unmarshal(b, &m); err != nil || resp.StatusCode != http.StatusOK || m.ID != 7 || len(m.Result.Tools) != 2 {
		t.Fatalf("answer %d %s (%v)", resp.StatusCode, b, err)
	}
	got := map[string]string{}
	for _, tool := range m.Result.Tools {
		f := tool.InputSchema.Properties["file"].File
		got[tool.Name] = strings.Join(f.TransferModes, ",") + " " + strings.Join(f.Accept, ",")
	}
	if got["upload"] != "inline,upload application/pdf" || got["own"] != "upload " {
		t.Fatalf("transferModes %q; want upload: inline,upload (accept kept), own: upload", got)
	}
}

// A tools/list answer over MaxRewriteBytes reaches the client unchanged
// (without the upload mode), not as an error.
func TestToolsListOverBoundRelayedUnchanged(t *testing.T) {
	up := newInlineUpstream(t)
	g := newGateway(t, up.URL, func(o *Options) { o.Files.Opener = uploadedFiles{}; o.MaxRewriteBytes = 256 })
	resp, b := post(t, serveGateway(t, g).URL, nil, `{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{}}`)
	if resp.StatusCode != http.StatusOK || !bytes.Contains(b, []byte(`"x-mcp-file":{"accept":["application/pdf"]}`)) ||
		bytes.Contains(b, []byte(`"inline"`)) {
		t.Fatalf("answer %d %s; want the upstream's, unchanged", resp.StatusCode, b)
	}
}
