package server

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/mcpblob/mcpblob/core/blobs"
	"github.com/mcpblob/mcpblob/core/mcp"

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

// fileURIs is the gateway's gateway.FileOpener: the SEP-2631 files of the
// blob application (core/blobs) on the server's backend, opened as a tool
// handler opens them (the caller's own, uploaded, the bytes verified).
type fileURIs struct{ blobs *blobs.App }

func (f fileURIs) OpenFile(ctx context.Context, principal, uri string) (gateway.OpenedFile, error) {
	src, err := f.blobs.OpenFileURI(mcp.FileURI{Ctx: ctx, Principal: principal, URI: uri})
	var fe *mcp.FileError
	if errors.As(err, &fe) {
		return gateway.OpenedFile{}, &gateway.FileURIError{Reason: fileURIReason(fe.Reason), Problem: fe.Reason}
	}
	if err != nil {
		return gateway.OpenedFile{}, err
	}
	return gateway.OpenedFile{MediaType: src.MediaType, Size: src.Size, Body: src.Body}, nil
}

// fileURIReason is docs/files.md's data.reason of an OpenFileURI refusal:
// a URI of another server is invalidUri, bytes not arrived
// uploadIncomplete, anything else (unknown, another principal's, failed,
// gone) fileNotFound.
func fileURIReason(problem string) string {
	switch {
	case strings.HasPrefix(problem, "not a file URI"):
		return "invalidUri"
	case strings.Contains(problem, "not been uploaded"):
		return "uploadIncomplete"
	}
	return "fileNotFound"
}

// fileOpener is the gateway's opener of the file URIs it expands.
func (s *Server) fileOpener(o gateway.Options) gateway.FileOpener {
	if o.Files.Opener != nil {
		return o.Files.Opener
	}
	return fileURIs{s.blobs}
}
