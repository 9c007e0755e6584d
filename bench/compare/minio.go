package main

import (
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/mcpblob/mcpblob/bench/internal/proc"
	"github.com/mcpblob/mcpblob/storage"
	"github.com/mcpblob/mcpblob/storage/s3"
)

// minioPeer is MinIO serving the same bytes over S3: a single-drive server
// on loopback, each object fetched with a presigned GET URL (what a client
// of an S3-backed blob service downloads from).
type minioPeer struct {
	store *s3.Store
	urls  map[string]string // presigned GET URL by key
}

// startMinIO starts bin on a free loopback port with its data under work,
// and uploads the files in files (named by key) to the bucket "bench".
func startMinIO(ctx context.Context, bin, work, files string) (*proc.Proc, *minioPeer, error) {
	if _, err := os.Stat(bin); err != nil {
		return nil, nil, fmt.Errorf("MinIO missing (%s): run `make tools`", bin)
	}
	user, secret := "mcpblob-bench", rand.Text()
	p, api, err := proc.StartMinIO(bin, user, secret, []string{filepath.Join(work, "minio")})
	if err != nil {
		return nil, nil, err
	}
	st, err := s3.Open(ctx, s3.Options{Endpoint: "http://" + api, Bucket: "bench", AccessKey: user, SecretKey: secret, CreateBucket: true})
	if err != nil {
		p.Stop()
		return nil, nil, err
	}
	m := &minioPeer{store: st, urls: map[string]string{}}
	entries, err := os.ReadDir(files)
	if err == nil {
		for _, e := range entries {
			if err = m.put(ctx, e.Name(), filepath.Join(files, e.Name())); err != nil {
				break
			}
		}
	}
	if err != nil {
		p.Stop()
		return nil, nil, err
	}
	return p, m, nil
}

// put uploads the file at path as key and presigns its GET URL.
func (m *minioPeer) put(ctx context.Context, key, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	w, err := m.store.Create(ctx, key, storage.CreateOptions{Size: fi.Size(), MediaType: "application/octet-stream"})
	if err != nil {
		return err
	}
	if _, err := f.WriteTo(w); err != nil {
		w.Abort(ctx)
		return err
	}
	if _, err := w.Commit(ctx); err != nil {
		return err
	}
	u, err := m.store.PresignGet(ctx, key, 6*time.Hour, storage.PresignOptions{})
	if err != nil {
		return err
	}
	m.urls[key] = u.String()
	return nil
}
