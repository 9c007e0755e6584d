package server

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"time"

	"github.com/mcpblob/mcpblob/core/gateway"
	"github.com/mcpblob/mcpblob/storage"
	"github.com/mcpblob/mcpblob/storage/ingest"
)

// cacheKeyPrefix is where the gateway's stream cache lives in a
// principal's namespace: gateway/cache/{tag of the principal}/{tag of the
// upstream and URI}.
const cacheKeyPrefix = "gateway/cache/"

// factsSuffix names an entry's facts object: {entry key}.facts.
const factsSuffix = ".facts"

// maxFactsBytes bounds a facts object read back.
const maxFactsBytes = 4 << 10

// cacheStore is the gateway's gateway.CacheStore: the server's backend
// through storage/ingest (ingest.NewReplacingUpload: the media type
// sniffed when the upstream gave none before the first byte), each entry
// in its principal's namespace (tenancy) under a tag of the principal,
// replaced in place when stored again; its links are /d links of the
// blob service, bound to the entry's version (ETag), so a link minted
// before a replacement finds nothing. An entry's gateway.CacheFacts (its
// expiry and the resource's version) are a small JSON object next to it,
// written after the entry and valid only for the entry's ETag it names:
// facts left from an older entry, or none yet, read as none (the
// gateway then applies its TTL alone).
type cacheStore struct{ gatewayStore }

// cacheFacts is the facts object.
type cacheFacts struct {
	ETag    string    `json:"etag"`
	Expires time.Time `json:"expires,omitzero"`
	Version string    `json:"version,omitempty"`
}

// key is the raw store key of k.
func (c *cacheStore) key(k gateway.CacheKey) string {
	e := sha256.Sum256([]byte(k.Upstream + "\x00" + k.URI))
	return c.rawKey(k.Principal, cacheKeyPrefix, hex.EncodeToString(e[:16]))
}

func (c *cacheStore) Create(ctx context.Context, k gateway.CacheKey, mediaType string) (gateway.CacheWriter, error) {
	key := c.key(k)
	return &cacheWriter{up: ingest.NewReplacingUpload(ctx, c.be, key, mediaType), be: c.be, key: key}, nil
}

func (c *cacheStore) Link(ctx context.Context, k gateway.CacheKey, singleUse bool) (string, gateway.CacheInfo, error) {
	key := c.key(k)
	url, info, err := c.link(ctx, k.Principal, key, singleUse)
	if err != nil {
		return "", gateway.CacheInfo{}, err
	}
	ci := gateway.CacheInfo{Size: info.Size, Stored: info.ModTime}
	if f, ok := readFacts(ctx, c.be, key+factsSuffix); ok && f.ETag == info.ETag {
		ci.Expires, ci.Version = f.Expires, f.Version
	}
	return url, ci, nil
}

func (c *cacheStore) Delete(ctx context.Context, k gateway.CacheKey) error {
	key := c.key(k)
	for _, key := range []string{key, key + factsSuffix} {
		if err := c.be.Delete(ctx, key); err != nil && !errors.Is(err, storage.ErrNotFound) {
			return err
		}
	}
	return nil
}

// readFacts reads a facts object; false when there is none or it is not
// one.
func readFacts(ctx context.Context, be storage.Backend, key string) (cacheFacts, bool) {
	rc, _, err := be.Open(ctx, key, nil)
	if err != nil {
		return cacheFacts{}, false
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, maxFactsBytes))
	var f cacheFacts
	return f, err == nil && json.Unmarshal(b, &f) == nil
}

// cacheWriter stores an entry, then its facts.
type cacheWriter struct {
	up  *ingest.SniffedUpload
	be  storage.Backend
	key string
}

func (w *cacheWriter) Write(p []byte) (int, error) { return w.up.Write(p) }

func (w *cacheWriter) Abort() { w.up.Abort() }

func (w *cacheWriter) Commit(ctx context.Context, facts gateway.CacheFacts) error {
	info, err := w.up.Commit(ctx)
	if err != nil {
		return err
	}
	b, err := json.Marshal(cacheFacts{ETag: info.ETag, Expires: facts.Expires, Version: facts.Version})
	if err != nil {
		return err
	}
	sw, err := w.be.Create(ctx, w.key+factsSuffix, storage.CreateOptions{MediaType: "application/json", Size: int64(len(b))})
	if err != nil {
		return err
	}
	if _, err := io.Copy(sw, bytes.NewReader(b)); err != nil {
		_ = sw.Abort(ctx)
		return err
	}
	_, err = sw.Commit(ctx)
	return err
}

// streamCache is the gateway's stream cache store, when o keeps one.
func (s *Server) streamCache(o gateway.Options) gateway.CacheStore {
	if !o.Cache.On || o.Cache.Store != nil {
		return o.Cache.Store
	}
	return &cacheStore{s.gatewayStore(o)}
}
