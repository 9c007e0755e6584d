package server

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/mcpblob/mcpblob/core/auth"
	"github.com/mcpblob/mcpblob/core/gateway"
	"github.com/mcpblob/mcpblob/core/server/blobsvc"
	"github.com/mcpblob/mcpblob/core/tenancy"
	"github.com/mcpblob/mcpblob/core/token"
	"github.com/mcpblob/mcpblob/storage"
)

// offloadKeyPrefix is where the gateway's offloaded blobs live in a
// principal's namespace: gateway/offload/{tag of the principal}/{id}.
const offloadKeyPrefix = "gateway/offload/"

// offloadStore is the gateway's gateway.OffloadStore: the server's
// backend through storage/ingest (blobsvc.SniffedUpload), each blob in its principal's namespace
// (tenancy) under a tag of the principal (so that no other caller reaches
// it in shared mode either); its links are /d links of the blob service.
type offloadStore struct {
	be      storage.Backend
	policy  tenancy.Policy
	keyring *token.Keyring
	base    string // of /d links
	ttl     time.Duration
}

// key is the raw store key of principal's blob id.
func (o *offloadStore) key(principal, id string) string {
	sum := sha256.Sum256([]byte(principal))
	return o.policy.Raw(auth.Identity{Principal: principal}, offloadKeyPrefix+hex.EncodeToString(sum[:12])+"/"+id)
}

func (o *offloadStore) Create(ctx context.Context, principal, id, mediaType string) (gateway.OffloadWriter, error) {
	return offloadWriter{blobsvc.NewSniffedUpload(ctx, o.be, o.key(principal, id), mediaType)}, nil
}

func (o *offloadStore) Open(ctx context.Context, principal, id string) (io.ReadCloser, gateway.OffloadInfo, error) {
	rc, info, err := o.be.Open(ctx, o.key(principal, id), nil)
	if err != nil {
		return nil, gateway.OffloadInfo{}, notFound(err)
	}
	return rc, gateway.OffloadInfo{Size: info.Size, MediaType: info.MediaType}, nil
}

func (o *offloadStore) Link(ctx context.Context, principal, id string) (string, gateway.OffloadInfo, error) {
	key := o.key(principal, id)
	info, err := o.be.Stat(ctx, key)
	if err != nil {
		return "", gateway.OffloadInfo{}, notFound(err)
	}
	link, err := o.keyring.MintDownload(o.base, token.DownloadGrant{Principal: principal, Key: key, Version: info.ETag, TTL: o.ttl})
	if err != nil {
		return "", gateway.OffloadInfo{}, err
	}
	return link.URL, gateway.OffloadInfo{Size: info.Size, MediaType: info.MediaType}, nil
}

func (o *offloadStore) Delete(ctx context.Context, principal, id string) error {
	return o.be.Delete(ctx, o.key(principal, id))
}

// notFound maps the store's missing object to the gateway's.
func notFound(err error) error {
	if errors.Is(err, storage.ErrNotFound) {
		return fmt.Errorf("%w: %w", gateway.ErrOffloadNotFound, err)
	}
	return err
}

// offloadWriter is a blob being offloaded: a blobsvc.SniffedUpload (the
// upstream's mimeType often comes after the blob).
type offloadWriter struct{ *blobsvc.SniffedUpload }

func (w offloadWriter) Commit(ctx context.Context) (gateway.OffloadInfo, error) {
	info, err := w.SniffedUpload.Commit(ctx)
	if err != nil {
		return gateway.OffloadInfo{}, err
	}
	return gateway.OffloadInfo{Size: info.Size, MediaType: info.MediaType}, nil
}

// offloads is the gateway's offload store, when o offloads.
func (s *Server) offloads(o gateway.Options) gateway.OffloadStore {
	if o.Offload.Over <= 0 || o.Offload.Store != nil {
		return o.Offload.Store
	}
	base := s.opts.DownloadURL
	if base == "" {
		base = s.opts.PublicURL
	}
	ttl := o.StreamTTL
	if ttl <= 0 {
		ttl = gateway.DefaultStreamTTL
	}
	return &offloadStore{be: s.opts.Backend, policy: s.gate.Tenancy, keyring: s.opts.Keyring, base: base, ttl: ttl}
}
