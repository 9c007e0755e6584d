package server

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"time"

	"github.com/mcpblob/mcpblob/core/auth"
	"github.com/mcpblob/mcpblob/core/gateway"
	"github.com/mcpblob/mcpblob/core/server/blobsvc"
	"github.com/mcpblob/mcpblob/core/tenancy"
	"github.com/mcpblob/mcpblob/core/token"
	"github.com/mcpblob/mcpblob/storage"
)

// cacheKeyPrefix is where the gateway's stream cache lives in a
// principal's namespace: gateway/cache/{tag of the principal}/{tag of the
// upstream and URI}.
const cacheKeyPrefix = "gateway/cache/"

// cacheStore is the gateway's gateway.CacheStore: the server's backend
// through storage/ingest (blobsvc.NewReplacingUpload: the media type
// sniffed when the upstream gave none before the first byte), each entry
// in its principal's namespace (tenancy) under a tag of the principal,
// replaced in place when stored again; its links are /d links of the
// blob service, bound to the entry's version (ETag), so a link minted
// before a replacement finds nothing.
type cacheStore struct {
	be      storage.Backend
	policy  tenancy.Policy
	keyring *token.Keyring
	base    string // of /d links
	ttl     time.Duration
}

// key is the raw store key of k.
func (c *cacheStore) key(k gateway.CacheKey) string {
	p := sha256.Sum256([]byte(k.Principal))
	e := sha256.Sum256([]byte(k.Upstream + "\x00" + k.URI))
	return c.policy.Raw(auth.Identity{Principal: k.Principal},
		cacheKeyPrefix+hex.EncodeToString(p[:12])+"/"+hex.EncodeToString(e[:16]))
}

func (c *cacheStore) Create(ctx context.Context, k gateway.CacheKey, mediaType string) (gateway.OffloadWriter, error) {
	return offloadWriter{blobsvc.NewReplacingUpload(ctx, c.be, c.key(k), mediaType)}, nil
}

func (c *cacheStore) Link(ctx context.Context, k gateway.CacheKey, singleUse bool) (string, gateway.CacheInfo, error) {
	key := c.key(k)
	info, err := c.be.Stat(ctx, key)
	if err != nil {
		return "", gateway.CacheInfo{}, notFound(err)
	}
	link, err := c.keyring.MintDownload(c.base, token.DownloadGrant{Principal: k.Principal, Key: key,
		Version: info.ETag, SingleUse: singleUse, TTL: c.ttl})
	if err != nil {
		return "", gateway.CacheInfo{}, err
	}
	return link.URL, gateway.CacheInfo{Size: info.Size, Stored: info.ModTime}, nil
}

func (c *cacheStore) Delete(ctx context.Context, k gateway.CacheKey) error {
	if err := c.be.Delete(ctx, c.key(k)); err != nil && !errors.Is(err, storage.ErrNotFound) {
		return err
	}
	return nil
}

// streamCache is the gateway's stream cache store, when o keeps one.
func (s *Server) streamCache(o gateway.Options) gateway.CacheStore {
	if !o.Cache.On || o.Cache.Store != nil {
		return o.Cache.Store
	}
	base := s.opts.DownloadURL
	if base == "" {
		base = s.opts.PublicURL
	}
	ttl := o.StreamTTL
	if ttl <= 0 {
		ttl = gateway.DefaultStreamTTL
	}
	return &cacheStore{be: s.opts.Backend, policy: s.gate.Tenancy, keyring: s.opts.Keyring, base: base, ttl: ttl}
}
