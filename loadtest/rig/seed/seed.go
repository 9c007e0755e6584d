// Package seed generates the deterministic blob bytes every benchmark and
// load test uses (the same generator as cmd/mcpblob's end-to-end tests),
// writes them as plain files for the peers and nginx, and stores them in an
// mcpblob local store before the server starts.
package seed

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"

	"github.com/mcpblob/mcpblob/storage"
	"github.com/mcpblob/mcpblob/storage/localfs"
)

// Reader returns size deterministic pseudo-random bytes.
func Reader(size int64) io.Reader { return &gen{size: size} }

type gen struct{ off, size int64 }

func (g *gen) Read(p []byte) (int, error) {
	if g.off >= g.size {
		return 0, io.EOF
	}
	n := int(min(int64(len(p)), g.size-g.off))
	for i := range n {
		p[i] = byte((g.off + int64(i)) * 2654435761 >> 13)
	}
	g.off += int64(n)
	return n, nil
}

// SHA256 is the hex sha256 of the size-byte blob.
func SHA256(size int64) string {
	h := sha256.New()
	io.CopyBuffer(h, Reader(size), make([]byte, 1<<20))
	return hex.EncodeToString(h.Sum(nil))
}

// File writes the size-byte blob to path and returns its hex sha256.
func File(path string, size int64) (string, error) {
	f, err := os.Create(path)
	if err != nil {
		return "", err
	}
	h := sha256.New()
	if _, err := io.CopyBuffer(io.MultiWriter(f, h), Reader(size), make([]byte, 1<<20)); err != nil {
		f.Close()
		return "", err
	}
	if err := f.Close(); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// Blob is one blob to store.
type Blob struct {
	Key  string
	Size int64
}

// Store writes the blobs into the mcpblob local store at dir (which must not
// be served at the time: the store holds a lock on its folder) and returns
// their sha256 by key.
func Store(dir string, blobs ...Blob) (map[string]string, error) {
	ctx := context.Background()
	st, err := localfs.Open(dir, localfs.Options{})
	if err != nil {
		return nil, err
	}
	defer st.Close()
	sums := make(map[string]string, len(blobs))
	for _, b := range blobs {
		w, err := st.Create(ctx, b.Key, storage.CreateOptions{MediaType: "application/octet-stream"})
		if err != nil {
			return nil, err
		}
		h := sha256.New()
		if _, err := io.CopyBuffer(io.MultiWriter(w, h), Reader(b.Size), make([]byte, 1<<20)); err != nil {
			w.Abort(ctx)
			return nil, err
		}
		info, err := w.Commit(ctx)
		if err != nil {
			w.Abort(ctx)
			return nil, err
		}
		want := hex.EncodeToString(h.Sum(nil))
		if info.SHA256 != "" && info.SHA256 != want {
			return nil, fmt.Errorf("seed: %s: store computed sha256 %s, want %s", b.Key, info.SHA256, want)
		}
		sums[b.Key] = want
	}
	return sums, nil
}
