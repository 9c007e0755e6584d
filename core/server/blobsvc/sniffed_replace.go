package blobsvc

import (
	"context"

	"github.com/mcpblob/mcpblob/storage"
	"github.com/mcpblob/mcpblob/storage/ingest"
)

// NewReplacingUpload is NewSniffedUpload for a key that may exist: Commit
// replaces the object (the gateway's stream cache stores a resource again
// in place).
func NewReplacingUpload(ctx context.Context, be storage.Backend, key, mediaType string) *SniffedUpload {
	return &SniffedUpload{ctx: ctx, be: be, spec: ingest.Spec{Key: key, MediaType: mediaType, NoSniff: true}}
}
