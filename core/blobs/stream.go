package blobs

import (
	"errors"
	"fmt"
	"time"

	"github.com/mcpblob/mcpblob/core/mcp"
	"github.com/mcpblob/mcpblob/core/mcp/resstream"
	"github.com/mcpblob/mcpblob/core/token"
	"github.com/mcpblob/mcpblob/storage"
)

// streamMode resolves the configured mode against the backend.
func (a *App) streamMode() string {
	_, presigns := a.backend.(storage.Presigner)
	switch a.opts.StreamMode {
	case StreamDirect, StreamURL:
		return a.opts.StreamMode
	}
	if presigns {
		return StreamRedirect
	}
	return StreamDirect
}

// stream serves resources/stream of a blob (SEP-2532) in the configured
// mode: a signed single-use downloadUrl, a redirect to a presigned URL, or
// the raw bytes.
func (a *App) stream(c *mcp.Call, uri string, maxSize int64) (*resstream.Answer, error) {
	key, err := blobKey(c, uri)
	if err != nil {
		return nil, err
	}
	view := a.view(c)
	info, err := view.Stat(c.Context(), key)
	if err != nil {
		if errors.Is(err, storage.ErrNotFound) || errors.Is(err, storage.ErrInvalidKey) {
			return nil, c.NotFound(uri)
		}
		return nil, fmt.Errorf("blobs: stat %q: %w", key, err)
	}
	if maxSize > 0 && info.Size > maxSize {
		return nil, resstream.TooLarge(uri, info.Size, maxSize)
	}
	canonical := URI(info.Key)
	switch a.streamMode() {
	case StreamURL:
		link, err := a.keyring.MintDownload(a.opts.DownloadURL, token.DownloadGrant{
			Principal: c.Principal(), Key: a.raw(c, info.Key), Version: info.ETag, SingleUse: true, TTL: a.opts.LinkTTL})
		if err != nil {
			return nil, fmt.Errorf("blobs: mint download link: %w", err)
		}
		return &resstream.Answer{URI: canonical, MIMEType: mediaType(info), Size: info.Size, DownloadURL: link.URL}, nil
	case StreamRedirect:
		// The view presigns whenever the backend does (namespace.View).
		ttl := storage.CapTTL(a.opts.LinkTTL, info.Expires, time.Now()) // the URL ends with the blob
		u, err := view.(storage.Presigner).PresignGet(c.Context(), info.Key, ttl, storage.PresignOptions{
			ContentType: mediaType(info), ContentDisposition: ContentDisposition("attachment", DownloadName(info))})
		if err != nil {
			return nil, fmt.Errorf("blobs: presign %q: %w", key, err)
		}
		return &resstream.Answer{URI: canonical, Location: u.String(),
			Header: [][2]string{{resstream.HeaderResourceURI, canonical}, {"Cache-Control", "no-store"}, {HeaderContentTypeOptions, NoSniff}}}, nil
	}
	return a.streamDirect(c, uri, key, maxSize)
}

// streamDirect opens the blob for a direct answer; the reader may be bound
// to the call's context (S3), which lives until the body is out.
func (a *App) streamDirect(c *mcp.Call, uri, key string, maxSize int64) (*resstream.Answer, error) {
	rc, info, err := a.view(c).Open(c.Context(), key, nil)
	if err != nil {
		if errors.Is(err, storage.ErrNotFound) {
			return nil, c.NotFound(uri)
		}
		return nil, fmt.Errorf("blobs: open %q: %w", key, err)
	}
	if maxSize > 0 && info.Size > maxSize { // replaced since Stat
		rc.Close()
		return nil, resstream.TooLarge(uri, info.Size, maxSize)
	}
	canonical := URI(info.Key)
	h := append([][2]string{
		{"Content-Disposition", ContentDisposition("attachment", DownloadName(info))},
		{resstream.HeaderResourceURI, canonical},
		{"Cache-Control", "no-store"},
	}, SafetyHeaders(mediaType(info))...)
	if info.ETag != "" {
		h = append(h, [2]string{"ETag", info.ETag})
	}
	if info.SHA256 != "" {
		h = append(h, [2]string{"x-mcp-sha256", info.SHA256})
	}
	return &resstream.Answer{URI: canonical, MIMEType: mediaType(info), Size: info.Size, Body: rc, Header: h}, nil
}
