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
	"github.com/mcpblob/mcpblob/core/tenancy"
	"github.com/mcpblob/mcpblob/core/token"
	"github.com/mcpblob/mcpblob/storage"
	"github.com/mcpblob/mcpblob/storage/ingest"
)

// offloadKeyPrefix is where the gateway's offloaded blobs live in a
// principal's namespace: gateway/offload/{tag of the principal}/{id}.
const offloadKeyPrefix = "gateway/offload/"

// gatewayStore is what the gateway's stores (offloaded blobs, the stream
// cache) share: the server's backend, each object in its principal's
// namespace (tenancy) under a tag of the principal (so that no other caller
// reaches it in shared mode either), and /d links of the blob service bound
// to the object's version.
type gatewayStore struct {
	be      storage.Backend
	policy  tenancy.Policy
	keyring *token.Keyring
	base    string // of /d links
	ttl     time.Duration
}

// gatewayStore is the store both gateway stores build on.
func (s *Server) gatewayStore(o gateway.Options) gatewayStore {
	base := s.opts.DownloadURL
	if base == "" {
		base = s.opts.PublicURL
	}
	ttl := o.StreamTTL
	if ttl <= 0 {
		ttl = gateway.DefaultStreamTTL
	}
	return gatewayStore{be: s.opts.Backend, policy: s.gate.Tenancy, keyring: s.opts.Keyring, base: base, ttl: ttl}
}

// rawKey is the raw store key of name under prefix in principal's share.
func (g gatewayStore) rawKey(principal, prefix, name string) string {
	sum := sha256.Sum256([]byte(principal))
	return g.policy.Raw(auth.Identity{Principal: principal}, prefix+hex.EncodeToString(sum[:12])+"/"+name)
}

// link mints principal's /d link to the object at key, as it is now.
func (g gatewayStore) link(ctx context.Context, principal, key string, singleUse bool) (string, storage.Info, error) {
	info, err := g.be.Stat(ctx, key)
	if err != nil {
		return "", storage.Info{}, notFound(err)
	}
	link, err := g.keyring.MintDownload(g.base, token.DownloadGrant{Principal: principal, Key: key,
		Version: info.ETag, SingleUse: singleUse, TTL: g.ttl})
	if err != nil {
		return "", storage.Info{}, err
	}
	return link.URL, info, nil
}

// offloadStore is the gateway's gateway.OffloadStore: a gatewayStore
// written through storage/ingest (ingest.SniffedUpload).
type offloadStore struct{ gatewayStore }

// key is the raw store key of principal's blob id.
func (o *offloadStore) key(principal, id string) string {
	return o.rawKey(principal, offloadKeyPrefix, id)
}

func (o *offloadStore) Create(ctx context.Context, principal, id, mediaType string) (gateway.OffloadWriter, error) {
	return offloadWriter{ingest.NewSniffedUpload(ctx, o.be, o.key(principal, id), mediaType)}, nil
}

func (o *offloadStore) Open(ctx context.Context, principal, id string) (io.ReadCloser, gateway.OffloadInfo, error) {
	rc, info, err := o.be.Open(ctx, o.key(principal, id), nil)
	if err != nil {
		return nil, gateway.OffloadInfo{}, notFound(err)
	}
	return rc, gateway.OffloadInfo{Size: info.Size, MediaType: info.MediaType}, nil
}

func (o *offloadStore) Link(ctx context.Context, principal, id string) (string, gateway.OffloadInfo, error) {
	url, info, err := o.link(ctx, principal, o.key(principal, id), false)
	if err != nil {
		return "", gateway.OffloadInfo{}, err
	}
	return url, gateway.OffloadInfo{Size: info.Size, MediaType: info.MediaType}, nil
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

// offloadWriter is a blob being offloaded: a ingest.SniffedUpload (the
// upstream's mimeType often comes after the blob).
type offloadWriter struct{ *ingest.SniffedUpload }

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
	return &offloadStore{s.gatewayStore(o)}
}
