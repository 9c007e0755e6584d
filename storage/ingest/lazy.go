package ingest

import (
	"context"
	"errors"

	"github.com/mcpblob/mcpblob/storage"
)

// SniffedUpload stores one object through Begin, the upload beginning at
// the first Write: when no media type was given, it is
// sniffed from that Write's bytes (magic numbers). The gateway's offloaded
// blobs go this way (their first Write holds the offload threshold's
// bytes, and the upstream's mimeType may come after the blob).
type SniffedUpload struct {
	ctx  context.Context
	be   storage.Backend
	spec Spec
	up   *Upload
}

// NewSniffedUpload prepares the upload of a new object key (IfNotExists)
// of mediaType ("": sniffed) under ctx, which bounds the whole write.
func NewSniffedUpload(ctx context.Context, be storage.Backend, key, mediaType string) *SniffedUpload {
	return &SniffedUpload{ctx: ctx, be: be, spec: Spec{Key: key, MediaType: mediaType, NoSniff: true, IfNotExists: true}}
}

func (u *SniffedUpload) Write(p []byte) (int, error) {
	if u.up == nil {
		if u.spec.MediaType == "" {
			u.spec.MediaType = Sniff(p)
		}
		up, err := Begin(u.ctx, u.be, u.spec)
		if err != nil {
			return 0, err
		}
		u.up = up
	}
	return u.up.Write(p)
}

// Commit makes the object visible (an empty upload is refused).
func (u *SniffedUpload) Commit(ctx context.Context) (storage.Info, error) {
	if u.up == nil {
		return storage.Info{}, errors.New("ingest: an upload with no bytes")
	}
	if err := u.up.Close(); err != nil {
		return storage.Info{}, err
	}
	return u.up.Commit(ctx)
}

// Abort discards the upload; safe after Commit.
func (u *SniffedUpload) Abort() {
	if u.up != nil {
		u.up.Abort()
	}
}

// NewReplacingUpload is NewSniffedUpload for a key that may exist: Commit
// replaces the object (the gateway's stream cache stores a resource again
// in place).
func NewReplacingUpload(ctx context.Context, be storage.Backend, key, mediaType string) *SniffedUpload {
	return &SniffedUpload{ctx: ctx, be: be, spec: Spec{Key: key, MediaType: mediaType, NoSniff: true}}
}
