package client

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// blobServer is a small in-memory implementation of the documented control
// API (docs/control-api.md), enough to exercise the client's side of the
// protocol: ranges, If-Range, error bodies. The real server is tested against
// this client end to end in core/server.
type blobServer struct {
	mu        sync.Mutex
	blobs     map[string][]byte
	types     map[string]string
	cutAfter  int64 // when > 0, the next GET sends only this many bytes then drops the connection
	lastRange string
	lastIf    string
}

func newBlobServer(t *testing.T) (*blobServer, *Client) {
	bs := &blobServer{blobs: map[string][]byte{}, types: map[string]string{}}
	ts := httptest.NewServer(bs)
	t.Cleanup(ts.Close)
	c, err := New(ts.URL, Options{APIKey: "k1"})
	if err != nil {
		t.Fatal(err)
	}
	return bs, c
}

func etagOf(b []byte) string {
	s := sha256.Sum256(b)
	return `"` + hex.EncodeToString(s[:]) + `"`
}

func writeError(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]any{"error": map[string]string{"code": code, "message": msg}})
}

func (bs *blobServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Authorization") != "Bearer k1" {
		writeError(w, 401, "unauthorized", "missing or unknown API key")
		return
	}
	bs.mu.Lock()
	defer bs.mu.Unlock()
	key, isBlob := strings.CutPrefix(r.URL.Path, "/v1/blobs/")
	switch {
	case isBlob && r.Method == http.MethodPut:
		body, _ := io.ReadAll(r.Body)
		if want := r.Header.Get("x-mcp-sha256"); want != "" && etagOf(body) != `"`+want+`"` {
			writeError(w, 400, "checksum_mismatch", "sha256 does not match")
			return
		}
		if _, ok := bs.blobs[key]; ok && r.Header.Get("If-None-Match") == "*" {
			writeError(w, 412, "exists", "exists")
			return
		}
		bs.blobs[key], bs.types[key] = body, r.Header.Get("Content-Type")
		w.WriteHeader(201)
		json.NewEncoder(w).Encode(bs.info(key))
	case isBlob && (r.Method == http.MethodGet || r.Method == http.MethodHead):
		b, ok := bs.blobs[key]
		if !ok {
			writeError(w, 404, "not_found", "blob not found")
			return
		}
		bs.lastRange, bs.lastIf = r.Header.Get("Range"), r.Header.Get("If-Range")
		w.Header().Set("ETag", etagOf(b))
		w.Header().Set("Content-Type", bs.types[key])
		w.Header().Set("x-mcp-sha256", strings.Trim(etagOf(b), `"`))
		if bs.cutAfter > 0 && r.Method == http.MethodGet {
			w.Header().Set("Content-Length", strconv.Itoa(len(b)))
			w.Write(b[:bs.cutAfter])
			bs.cutAfter = 0
			panic(http.ErrAbortHandler) // drop the connection mid-body
		}
		http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(b))
	case isBlob && r.Method == http.MethodDelete:
		if _, ok := bs.blobs[key]; !ok {
			writeError(w, 404, "not_found", "blob not found")
			return
		}
		delete(bs.blobs, key)
		w.WriteHeader(204)
	case r.URL.Path == "/v1/blobs" && r.Method == http.MethodGet:
		p := Page{}
		for k := range bs.blobs {
			if strings.HasPrefix(k, r.URL.Query().Get("prefix")) {
				p.Items = append(p.Items, bs.info(k))
			}
		}
		json.NewEncoder(w).Encode(p)
	case r.URL.Path == "/v1/links" && r.Method == http.MethodPost:
		var req LinkRequest
		if json.NewDecoder(r.Body).Decode(&req) != nil || req.Key == "" {
			writeError(w, 400, "bad_request", "key is required")
			return
		}
		w.WriteHeader(201)
		json.NewEncoder(w).Encode(Link{URL: "http://x/d/tok", ExpiresAt: time.Unix(1e9, 0).UTC()})
	default:
		writeError(w, 404, "not_found", "no route")
	}
}

func (bs *blobServer) info(key string) Blob {
	b := bs.blobs[key]
	return Blob{URI: "blob:///" + key, Key: key, Size: int64(len(b)), SHA256: strings.Trim(etagOf(b), `"`), MimeType: bs.types[key], ETag: etagOf(b)}
}

func TestRoundTrip(t *testing.T) {
	_, c := newBlobServer(t)
	ctx := context.Background()
	data := bytes.Repeat([]byte("mcpblob "), 1000)
	sum := strings.Trim(etagOf(data), `"`)
	b, err := c.Put(ctx, "dir/a file.bin", bytes.NewReader(data), PutOptions{ContentType: "application/x-test", SHA256: sum, Size: int64(len(data))})
	if err != nil {
		t.Fatal(err)
	}
	if b.Key != "dir/a file.bin" || b.Size != int64(len(data)) || b.SHA256 != sum {
		t.Fatalf("Put = %+v", b)
	}
	st, err := c.Stat(ctx, "dir/a file.bin")
	if err != nil || st.Size != int64(len(data)) || st.SHA256 != sum || st.MimeType != "application/x-test" {
		t.Fatalf("Stat = %+v, %v", st, err)
	}
	r, err := c.Open(ctx, "dir/a file.bin", 10, "")
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(r)
	r.Close()
	if r.Offset != 10 || r.Blob.Size != int64(len(data)) || !bytes.Equal(got, data[10:]) {
		t.Fatalf("Open from 10: offset %d size %d, %d bytes", r.Offset, r.Blob.Size, len(got))
	}
	p, err := c.List(ctx, "dir/", "", 0)
	if err != nil || len(p.Items) != 1 || p.Items[0].Key != "dir/a file.bin" {
		t.Fatalf("List = %+v, %v", p, err)
	}
	l, err := c.Link(ctx, LinkRequest{Key: "dir/a file.bin", TTLSeconds: 60})
	if err != nil || l.URL == "" || l.ExpiresAt.IsZero() {
		t.Fatalf("Link = %+v, %v", l, err)
	}
	if err := c.Delete(ctx, "dir/a file.bin"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Stat(ctx, "dir/a file.bin"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Stat after Delete: %v, want ErrNotFound", err)
	}
}

func TestErrors(t *testing.T) {
	_, c := newBlobServer(t)
	ctx := context.Background()
	if err := c.Delete(ctx, "missing"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Delete missing: %v", err)
	}
	if _, err := c.Put(ctx, "k", strings.NewReader("abc"), PutOptions{SHA256: strings.Repeat("0", 64)}); !errors.Is(err, ErrChecksum) {
		t.Errorf("Put with wrong sha256: %v", err)
	}
	if _, err := c.Put(ctx, "k", strings.NewReader("abc"), PutOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Put(ctx, "k", strings.NewReader("abc"), PutOptions{IfNotExists: true}); !errors.Is(err, ErrExists) {
		t.Errorf("Put IfNotExists over existing: %v", err)
	}
	var apiErr *Error
	if _, err := c.Link(ctx, LinkRequest{}); !errors.As(err, &apiErr) || apiErr.Status != 400 || apiErr.Code != "bad_request" {
		t.Errorf("Link without key: %v", err)
	}
	noKey, _ := New(c.base.String(), Options{})
	if _, err := noKey.Stat(ctx, "k"); !errors.Is(err, ErrUnauthorized) {
		t.Errorf("no API key: %v", err)
	}
	if _, err := New("ftp://x", Options{}); err == nil {
		t.Error("New accepted an ftp URL")
	}
}

func TestDownloadResumes(t *testing.T) {
	bs, c := newBlobServer(t)
	ctx := context.Background()
	data := make([]byte, 3<<20+17)
	for i := range data {
		data[i] = byte(i * 7)
	}
	if _, err := c.Put(ctx, "big", bytes.NewReader(data), PutOptions{}); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "big.out")

	bs.cutAfter = 1<<20 + 5
	if _, err := c.Download(ctx, "big", path, nil); err == nil {
		t.Fatal("first Download succeeded although the connection was cut")
	}
	if st, err := os.Stat(path + ".part"); err != nil || st.Size() == 0 {
		t.Fatalf("no partial file after an interrupted download: %v", err)
	}
	var last int64
	if _, err := c.Download(ctx, "big", path, func(done, total int64) { last = done }); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(bs.lastRange, "bytes=") || bs.lastRange == "bytes=0-" || bs.lastIf == "" {
		t.Errorf("resume sent Range %q If-Range %q", bs.lastRange, bs.lastIf)
	}
	got, _ := os.ReadFile(path)
	if !bytes.Equal(got, data) {
		t.Fatalf("resumed file differs (%d bytes vs %d)", len(got), len(data))
	}
	if last != int64(len(data)) {
		t.Errorf("progress ended at %d, want %d", last, len(data))
	}
	if _, err := os.Stat(path + ".part.etag"); !os.IsNotExist(err) {
		t.Errorf("etag file left behind: %v", err)
	}
}

func TestDownloadRestartsWhenBlobChanged(t *testing.T) {
	bs, c := newBlobServer(t)
	ctx := context.Background()
	old := bytes.Repeat([]byte("a"), 2<<20)
	c.Put(ctx, "k", bytes.NewReader(old), PutOptions{})
	path := filepath.Join(t.TempDir(), "k.out")
	bs.cutAfter = 1 << 20
	c.Download(ctx, "k", path, nil)

	fresh := bytes.Repeat([]byte("b"), 3<<20)
	c.Put(ctx, "k", bytes.NewReader(fresh), PutOptions{})
	if _, err := c.Download(ctx, "k", path, nil); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(path)
	if !bytes.Equal(got, fresh) {
		t.Fatalf("download after change is not the new blob (%d bytes)", len(got))
	}
}
