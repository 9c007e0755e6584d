package main

import (
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/minio/minio-go/v7"

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
	w, creds, _, err := startS3Node(ctx, bin, filepath.Join(work, "weed"), "bench")
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

// startS3Node starts a single SeaweedFS node in dir with fresh
// credentials and returns it, with a minio-go client of the harness's
// own, once it takes writes in bucket (weed.Writable creates it).
func startS3Node(ctx context.Context, bin, dir, bucket string) (*weed.Service, weed.S3Options, *minio.Client, error) {
	creds := weed.S3Options{AccessKey: "mcpblob-bench", SecretKey: rand.Text()}
	if _, err := os.Stat(bin); err != nil {
		return nil, creds, nil, fmt.Errorf("SeaweedFS missing (%s): run `make tools`", bin)
	}
	w, err := weed.StartServer(bin, dir, creds)
	if err != nil {
		return nil, creds, nil, err
	}
	client, err := weed.Client(w.Addr.HTTP, creds)
	if err == nil {
		wctx, cancel := context.WithTimeout(ctx, 60*time.Second)
		err = weed.Writable(wctx, client, bucket)
		cancel()
	}
	if err != nil {
		w.Stop()
		return nil, creds, nil, err
	}
	return w, creds, client, nil
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
