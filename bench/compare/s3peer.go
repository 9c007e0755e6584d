package main

import (
	"context"
	"os"
	"path/filepath"
	"time"

	"github.com/mcpblob/mcpblob/bench/compare/scale"
	"github.com/mcpblob/mcpblob/loadtest/rig/weed"
	"github.com/mcpblob/mcpblob/storage"
	"github.com/mcpblob/mcpblob/storage/s3"
)

// s3Peer is SeaweedFS serving the same bytes over S3: a single node on
// loopback, each object fetched with a presigned GET URL (what a client of
// an S3-backed blob service downloads from).
type s3Peer struct {
	store *s3.Store
	urls  map[string]string // presigned GET URL by key
}

// startSeaweedFS starts bin (one node) on free loopback ports with its
// data under work, and uploads the files in files (named by key) to the
// bucket "bench".
func startSeaweedFS(ctx context.Context, bin, work, files string) (*weed.Service, *s3Peer, error) {
	w, creds, _, err := scale.StartS3Node(ctx, bin, filepath.Join(work, "weed"), "bench")
	if err != nil {
		return nil, nil, err
	}
	st, err := s3.Open(ctx, s3.Options{Endpoint: "http://" + w.Addr.HTTP, Bucket: "bench", AccessKey: creds.AccessKey, SecretKey: creds.SecretKey})
	if err != nil {
		w.Stop()
		return nil, nil, err
	}
	m := &s3Peer{store: st, urls: map[string]string{}}
	entries, err := os.ReadDir(files)
	if err == nil {
		for _, e := range entries {
			if err = m.put(ctx, e.Name(), filepath.Join(files, e.Name())); err != nil {
				break
			}
		}
	}
	if err != nil {
		w.Stop()
		return nil, nil, err
	}
	return w, m, nil
}

// put uploads the file at path as key and presigns its GET URL.
func (m *s3Peer) put(ctx context.Context, key, path string) error {
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
