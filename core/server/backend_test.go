package server

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/mcpblob/mcpblob/storage"
)

// memBackend is a deterministic in-memory storage.Backend for transcripts:
// fixed ModTime, content-derived ETag. It is a test fixture, not a model of
// any real backend.
type memBackend struct {
	mu    sync.Mutex
	data  map[string][]byte
	types map[string]string
}

func newMemBackend() *memBackend {
	b := &memBackend{data: map[string][]byte{}, types: map[string]string{}}
	b.put("docs/readme.txt", "text/plain; charset=utf-8", []byte("Hello, \"blob\" world!\n\tTabbed line.\n"))
	b.put("docs/data.json", "application/json", []byte(`{"a":1,"b":[true,null]}`))
	b.put("images/dot.bin", "application/octet-stream", []byte{0, 1, 2, 3, 250, 251, 252, 253, 254, 255})
	b.put("bad-utf8.txt", "text/plain", []byte{'o', 'k', 0xff, 0xfe})
	b.put("dir with space/ünï.txt", "text/markdown", []byte("# Title\n"))
	return b
}

func (b *memBackend) put(key, mt string, data []byte) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.data[key] = data
	b.types[key] = mt
}

func (b *memBackend) infoLocked(key string) storage.Info {
	d := sha256.Sum256(b.data[key])
	return storage.Info{
		Key: key, Size: int64(len(b.data[key])), MediaType: b.types[key],
		SHA256: hex.EncodeToString(d[:]), ETag: `"` + hex.EncodeToString(d[:8]) + `"`,
		ModTime: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
	}
}

func (b *memBackend) Stat(_ context.Context, key string) (storage.Info, error) {
	if err := storage.ValidateKey(key); err != nil {
		return storage.Info{}, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.data[key]; !ok {
		return storage.Info{}, storage.ErrNotFound
	}
	return b.infoLocked(key), nil
}

func (b *memBackend) Open(_ context.Context, key string, _ *storage.Range) (io.ReadCloser, storage.Info, error) {
	if err := storage.ValidateKey(key); err != nil {
		return nil, storage.Info{}, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.data[key]; !ok {
		return nil, storage.Info{}, storage.ErrNotFound
	}
	return io.NopCloser(bytes.NewReader(b.data[key])), b.infoLocked(key), nil
}

// Create writes in memory: Commit stores the bytes (refusing an existing
// key under IfNotExists, a size other than Size, more than MaxSize).
func (b *memBackend) Create(_ context.Context, key string, opts storage.CreateOptions) (storage.Writer, error) {
	if err := storage.ValidateKey(key); err != nil {
		return nil, err
	}
	opts, err := opts.Normalize()
	if err != nil {
		return nil, err
	}
	return &memWriter{b: b, key: key, opts: opts}, nil
}

// memWriter is a memBackend write in progress.
type memWriter struct {
	b    *memBackend
	key  string
	opts storage.CreateOptions
	buf  bytes.Buffer
	done bool
}

func (w *memWriter) Write(p []byte) (int, error) {
	switch {
	case w.done:
		return 0, storage.ErrClosed
	case w.opts.MaxSize > 0 && int64(w.buf.Len()+len(p)) > w.opts.MaxSize:
		return 0, storage.ErrTooLarge
	}
	return w.buf.Write(p)
}

func (w *memWriter) Written() int64 { return int64(w.buf.Len()) }

func (w *memWriter) Commit(context.Context) (storage.Info, error) {
	if w.done {
		return storage.Info{}, storage.ErrClosed
	}
	w.done = true
	if w.opts.Size > 0 && int64(w.buf.Len()) != w.opts.Size {
		return storage.Info{}, storage.ErrSizeMismatch
	}
	w.b.mu.Lock()
	defer w.b.mu.Unlock()
	if _, ok := w.b.data[w.key]; ok && w.opts.IfNotExists {
		return storage.Info{}, storage.ErrExists
	}
	w.b.data[w.key] = bytes.Clone(w.buf.Bytes())
	w.b.types[w.key] = w.opts.MediaType
	return w.b.infoLocked(w.key), nil
}

func (w *memWriter) Abort(context.Context) error { w.done = true; return nil }

func (b *memBackend) Delete(_ context.Context, key string) error {
	if err := storage.ValidateKey(key); err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.data[key]; !ok {
		return storage.ErrNotFound
	}
	delete(b.data, key)
	return nil
}

// List pages with the last key of a page as the cursor.
func (b *memBackend) List(_ context.Context, prefix, cursor string, limit int) (storage.Page, error) {
	if cursor != "" && !strings.HasPrefix(cursor, "k:") {
		return storage.Page{}, storage.ErrInvalidCursor
	}
	after := strings.TrimPrefix(cursor, "k:")
	b.mu.Lock()
	defer b.mu.Unlock()
	var keys []string
	for k := range b.data {
		if strings.HasPrefix(k, prefix) && k > after {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	if limit <= 0 {
		limit = 1000
	}
	var p storage.Page
	for i, k := range keys {
		if i == limit {
			p.NextCursor = "k:" + keys[i-1]
			break
		}
		p.Items = append(p.Items, b.infoLocked(k))
	}
	return p, nil
}

func (b *memBackend) Close() error { return nil }
