package blobs

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/mcpblob/mcpblob/core/mcp"
	"github.com/mcpblob/mcpblob/core/mcp/mcptest"
	"github.com/mcpblob/mcpblob/storage"
)

// readResource sends a 2026-07-28 resources/read of uri to s, in memory
// (a streamed body shorter or longer than its declared length is an
// error).
func readResource(t *testing.T, s *mcp.Server, uri string) *mcptest.Response {
	t.Helper()
	q, _ := json.Marshal(uri)
	c := mcptest.NewInMemory(s).Client(mcptest.Version20260728)
	res, err := c.Call(context.Background(), "resources/read", `{"uri":`+string(q)+`}`)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// streamBackend serves one object from a reader that cannot seek (or,
// seekable, one that can), so the text rule must reopen; changed makes
// every Open after the first return another version.
type streamBackend struct {
	storage.Backend
	data     string
	mt       string
	changed  bool
	seekable bool

	mu     sync.Mutex
	opens  int
	closes int
}

type closeCounter struct {
	io.ReadSeeker
	b *streamBackend
}

func (c closeCounter) Close() error {
	c.b.mu.Lock()
	c.b.closes++
	c.b.mu.Unlock()
	return nil
}

// onlyReader hides the Seeker of a closeCounter.
type onlyReader struct{ c closeCounter }

func (r onlyReader) Read(p []byte) (int, error) { return r.c.Read(p) }
func (r onlyReader) Close() error               { return r.c.Close() }

func (b *streamBackend) Open(_ context.Context, key string, _ *storage.Range) (io.ReadCloser, storage.Info, error) {
	b.mu.Lock()
	b.opens++
	n := b.opens
	b.mu.Unlock()
	etag, data := `"v1"`, b.data
	if b.changed && n > 1 {
		etag, data = `"v2"`, b.data+"!"
	}
	info := storage.Info{Key: key, Size: int64(len(data)), MediaType: b.mt, ETag: etag}
	cc := closeCounter{strings.NewReader(data), b}
	if b.seekable {
		return cc, info, nil
	}
	return onlyReader{cc}, info, nil
}

// TestReadTextReopen: a text blob is scanned, then served again from a
// rewound or reopened reader; an object that changed in between is served
// as base64 of the new version, the Content-Length exact either way.
func TestReadTextReopen(t *testing.T) {
	t.Parallel()
	text := "line 1\n\"quoted\" ünï\n\t\x01"
	for _, tc := range []struct {
		name              string
		be                *streamBackend
		wantText, wantB64 string
		opens             int
	}{
		{"unchanged", &streamBackend{data: text, mt: "text/plain"}, text, "", 2},
		{"changed", &streamBackend{data: text, mt: "text/plain", changed: true}, "", text + "!", 2},
		{"seekable", &streamBackend{data: text, mt: "text/plain; charset=utf-8", seekable: true, changed: true}, text, "", 1},
		{"not UTF-8", &streamBackend{data: "ok\xff", mt: "text/plain"}, "", "ok\xff", 2},
		{"binary", &streamBackend{data: text, mt: "application/octet-stream"}, "", text, 1},
		{"JSON", &streamBackend{data: `{"a":"é"}`, mt: "application/json"}, `{"a":"é"}`, "", 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := mcp.NewServer(mcp.Implementation{Name: "test"}, nil)
			app, err := New(Options{Backend: tc.be})
			if err != nil {
				t.Fatal(err)
			}
			app.Register(s)
			res := readResource(t, s, "blob:///t.txt")
			if cl := res.Header.Get("Content-Length"); cl != strconv.Itoa(len(res.Body)) {
				t.Fatalf("Content-Length %q but %d bytes written: %s", cl, len(res.Body), res.Body)
			}
			var msg struct {
				Result struct {
					Contents []struct {
						URI      string  `json:"uri"`
						MIMEType string  `json:"mimeType"`
						Text     *string `json:"text"`
						Blob     *string `json:"blob"`
					} `json:"contents"`
				} `json:"result"`
			}
			if err := json.Unmarshal(res.Body, &msg); err != nil || len(msg.Result.Contents) != 1 {
				t.Fatalf("%v: %s", err, res.Body)
			}
			ct := msg.Result.Contents[0]
			if ct.URI != "blob:///t.txt" || ct.MIMEType != tc.be.mt {
				t.Errorf("uri %q, mimeType %q", ct.URI, ct.MIMEType)
			}
			switch {
			case tc.wantB64 == "":
				if ct.Text == nil || *ct.Text != tc.wantText || ct.Blob != nil {
					t.Fatalf("text = %v, blob %v", ct.Text, ct.Blob)
				}
			default:
				if ct.Blob == nil || ct.Text != nil {
					t.Fatalf("want base64, got text %v", ct.Text)
				}
				if b, _ := base64.StdEncoding.DecodeString(*ct.Blob); string(b) != tc.wantB64 {
					t.Fatalf("blob = %q, want %q", b, tc.wantB64)
				}
			}
			tc.be.mu.Lock()
			defer tc.be.mu.Unlock()
			if tc.be.opens != tc.opens || tc.be.closes != tc.opens {
				t.Errorf("%d opens, %d closes; want %d of each", tc.be.opens, tc.be.closes, tc.opens)
			}
		})
	}
}
