package server

import (
	"bytes"
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcpblob/mcpblob/storage"
	"github.com/mcpblob/mcpblob/storage/localfs"
)

// writeCounted is a local store counting the bytes written to it: objects
// (Create), records and staged parts.
type writeCounted struct {
	*localfs.Store
	written atomic.Int64
}

func (c *writeCounted) Create(ctx context.Context, key string, opts storage.CreateOptions) (storage.Writer, error) {
	w, err := c.Store.Create(ctx, key, opts)
	if err != nil {
		return nil, err
	}
	return countedWriter{Writer: w, n: &c.written}, nil
}

func (c *writeCounted) PutRecord(ctx context.Context, name string, data []byte, ifMatch string) (string, error) {
	c.written.Add(int64(len(data)))
	return c.Store.PutRecord(ctx, name, data, ifMatch)
}

func (c *writeCounted) PutStaged(ctx context.Context, id string, n int, off int64, data []byte) (storage.StagedPart, error) {
	c.written.Add(int64(len(data)))
	return c.Store.PutStaged(ctx, id, n, off, data)
}

type countedWriter struct {
	storage.Writer
	n *atomic.Int64
}

func (w countedWriter) Write(p []byte) (int, error) {
	n, err := w.Writer.Write(p)
	w.n.Add(int64(n))
	return n, err
}

// TestUploadTusWritesOnce: tus on an upload endpoint writes each byte to
// the store once (the staged write's part; the records add their small
// state), with no second copy at completion, and the stored object is the
// one the elicitation gets.
func TestUploadTusWritesOnce(t *testing.T) {
	parallel(t)
	st := &writeCounted{Store: newLocalStore(t)}
	c := serveMCP(t, Options{Backend: st}, legacyVersion, `{"elicitation":{"form":{},"binary":{"maxFileSize":104857600}}}`)
	events, req, p := startElicitation(t, c, `"accept":["text/*"],"maxSize":33554432`)
	ep := p.UploadEndpoints["file"]
	lc := newLinkTus(t, ep.URL)
	data := bytes.Repeat([]byte("each byte written once\n"), 1<<20) // 23 MiB
	_, path := lc.createFile(len(data), "once.txt", "text/plain")
	if path == "" {
		t.Fatal("creation refused")
	}
	const chunk = 8 << 20
	for off := 0; off < len(data); off += chunk {
		if r := lc.patch(path, off, data[off:min(off+chunk, len(data))], nil); r.StatusCode != 204 {
			t.Fatalf("PATCH at %d: %d %s", off, r.StatusCode, readAll(r))
		}
	}
	answer(t, c, req.ID, `{"action":"accept","content":{"file":{"name":"once.txt","size":`+itoa(len(data))+`,"mimeType":"text/plain","uploadId":"`+ep.UploadID+`"}}}`)
	res, _ := events.toolResult()
	if res.IsError || res.StructuredContent.SHA256 != hexSum(data) {
		t.Fatalf("result %+v", res)
	}
	ratio := float64(st.written.Load()) / float64(len(data))
	t.Logf("%.4f bytes written per byte uploaded", ratio)
	if ratio > 1.05 {
		t.Errorf("%.4f bytes written to the store per byte uploaded, want <= 1.05 (no second copy at completion)", ratio)
	}
}

// TestUploadTusDeclaredType: a declared type outside the token's accept
// list is refused at creation, before any byte is sent, and the link
// stays free for an upload of a type it takes.
func TestUploadTusDeclaredType(t *testing.T) {
	parallel(t)
	st := newLocalStore(t)
	c := serveMCP(t, Options{Backend: st}, legacyVersion, `{"elicitation":{"form":{},"binary":{"maxFileSize":104857600}}}`)
	_, req, p := startElicitation(t, c, `"accept":["image/png"],"maxSize":1000`)
	defer answer(t, c, req.ID, `{"action":"decline"}`)
	lc := newLinkTus(t, p.UploadEndpoints["file"].URL)
	r, path := lc.createFile(11, "notes.txt", "text/plain")
	if body := readAll(r); r.StatusCode != 415 || path != "" || !strings.Contains(body, "type_not_accepted") {
		t.Fatalf("text/plain on an image/png link: %d %s, want 415 type_not_accepted and no upload", r.StatusCode, body)
	}
	if _, path := lc.createFile(11, "image.png", "image/png"); path == "" {
		t.Fatal("the link was not freed by the refused creation")
	}
}
