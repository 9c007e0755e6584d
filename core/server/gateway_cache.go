package server

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"

	"github.com/mcpblob/mcpblob/core/gateway"
	"github.com/mcpblob/mcpblob/core/server/blobsvc"
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
type cacheStore struct{ gatewayStore }

// key is the raw store key of k.
func (c *cacheStore) key(k gateway.CacheKey) string {
	e := sha256.Sum256([]byte(k.Upstream + "\x00" + k.URI))
	return c.rawKey(k.Principal, cacheKeyPrefix, hex.EncodeToString(e[:16]))
}

func (c *cacheStore) Create(ctx context.Context, k gateway.CacheKey, mediaType string) (gateway.OffloadWriter, error) {
	return offloadWriter{blobsvc.NewReplacingUpload(ctx, c.be, c.key(k), mediaType)}, nil
}

func (c *cacheStore) Link(ctx context.Context, k gateway.CacheKey, singleUse bool) (string, gateway.CacheInfo, error) {
	url, info, err := c.link(ctx, k.Principal, c.key(k), singleUse)
	if err != nil {
		return "", gateway.CacheInfo{}, err
	}
	return url, gateway.CacheInfo{Size: info.Size, Stored: info.ModTime}, nil
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
	return &cacheStore{s.gatewayStore(o)}
}
