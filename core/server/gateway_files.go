package server

import (
	"context"
	"time"

	"github.com/mcpblob/mcpblob/core/gateway"
	"github.com/mcpblob/mcpblob/core/token"
	"github.com/mcpblob/mcpblob/storage"
	"github.com/mcpblob/mcpblob/storage/ingest"
)

// filesKeyPrefix is where the files the gateway delivers to its upstream
// by reference live in a principal's namespace: gateway/files/{tag of the
// principal}/{id}.
const filesKeyPrefix = "gateway/files/"

// fileStore is the gateway's gateway.FileStore: a gatewayStore written
// through storage/ingest (SniffedUpload); its links are /d links
// of the blob service bound to the file's version, with the file's name
// in Content-Disposition (x-mcp-sha256, Content-Type, Content-Length and
// Range as every /d link).
type fileStore struct{ gatewayStore }

func (f *fileStore) key(principal, id string) string {
	return f.rawKey(principal, filesKeyPrefix, id)
}

func (f *fileStore) Create(ctx context.Context, principal, id, mediaType string) (gateway.OffloadWriter, error) {
	return offloadWriter{ingest.NewSniffedUpload(ctx, f.be, f.key(principal, id), mediaType)}, nil
}

func (f *fileStore) Link(ctx context.Context, principal, id, name string, ttl time.Duration) (string, error) {
	key := f.key(principal, id)
	info, err := f.be.Stat(ctx, key)
	if err != nil {
		return "", notFound(err)
	}
	if storage.ValidateFilename(name) != nil {
		name = ""
	}
	link, err := f.keyring.MintDownload(f.base, token.DownloadGrant{Principal: principal, Key: key,
		Version: info.ETag, Filename: name, TTL: ttl})
	if err != nil {
		return "", err
	}
	return link.URL, nil
}

func (f *fileStore) Delete(ctx context.Context, principal, id string) error {
	return f.be.Delete(ctx, f.key(principal, id))
}

// fileArgs is the gateway's store of files delivered by reference.
func (s *Server) fileArgs(o gateway.Options) gateway.FileStore {
	if o.Files.Store != nil {
		return o.Files.Store
	}
	return &fileStore{s.gatewayStore(o)}
}
