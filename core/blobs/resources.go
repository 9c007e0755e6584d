package blobs

import (
	"errors"
	"fmt"
	"io"
	"mime"
	"strings"

	"github.com/mcpblob/mcpblob/core/mcp"
	"github.com/mcpblob/mcpblob/storage"
)

// isTextMediaType reports media types read as text when their bytes are
// valid UTF-8.
func isTextMediaType(mt string) bool {
	switch mt { // the common exact values, without parsing
	case "application/octet-stream":
		return false
	case "text/plain", "application/json":
		return true
	}
	base, _, err := mime.ParseMediaType(mt)
	if err != nil {
		return false
	}
	if strings.HasPrefix(base, "text/") || strings.HasSuffix(base, "+json") || strings.HasSuffix(base, "+xml") {
		return true
	}
	switch base {
	case "application/json", "application/xml", "application/javascript", "application/ecmascript",
		"application/x-ndjson", "application/yaml", "application/x-yaml", "application/toml",
		"application/sql", "application/graphql", "application/x-sh", "application/x-httpd-php":
		return true
	}
	return false
}

// key returns the key of a blob URI: ErrNoResource for other URIs, the
// era's not-found error for blob URIs that cannot name a blob.
func blobKey(c *mcp.Call, uri string) (string, error) {
	key, ok := ParseURI(uri)
	if !ok {
		if strings.HasPrefix(uri, URIPrefix) {
			return "", c.NotFound(uri)
		}
		return "", mcp.ErrNoResource
	}
	if storage.ValidateKey(key) != nil {
		return "", c.NotFound(uri)
	}
	return key, nil
}

func (a *App) list(c *mcp.Call, cursor string) ([]mcp.Resource, string, error) {
	page, err := a.view(c).List(c.Context(), "", cursor, a.opts.PageSize)
	if err != nil {
		if errors.Is(err, storage.ErrInvalidCursor) {
			return nil, "", mcp.InvalidParams("Invalid params: invalid cursor")
		}
		return nil, "", fmt.Errorf("blobs: list resources: %w", err)
	}
	out := make([]mcp.Resource, 0, len(page.Items))
	for _, info := range page.Items {
		out = append(out, resource(info))
	}
	return out, page.NextCursor, nil
}

// read serves resources/read of a blob. Text rule: a text resource's
// JSON-escaped length is not known up front, yet JSON responses carry
// Content-Length. For text blobs up to MaxTextBytes a first streaming pass
// checks UTF-8 and counts the escaped length, then the text is streamed
// again (seeking back, or reopening and checking the ETag). Larger or
// non-UTF-8 text is served as base64. Memory stays flat either way.
func (a *App) read(c *mcp.Call, uri string) (*mcp.Contents, error) {
	key, err := blobKey(c, uri)
	if err != nil {
		return nil, err
	}
	rc, info, err := a.view(c).Open(c.Context(), key, nil)
	if err != nil {
		if errors.Is(err, storage.ErrNotFound) || errors.Is(err, storage.ErrInvalidKey) {
			return nil, c.NotFound(uri)
		}
		return nil, fmt.Errorf("blobs: open %q: %w", key, err)
	}
	ct := &mcp.Contents{URI: uri, MIMEType: mediaType(info), Body: rc, Size: info.Size}
	if isTextMediaType(ct.MIMEType) && info.Size <= a.opts.MaxTextBytes {
		if err := a.textRule(c, key, info, ct); err != nil {
			ct.Body.Close()
			return nil, err
		}
	}
	return ct, nil
}

func (a *App) textRule(c *mcp.Call, key string, info storage.Info, ct *mcp.Contents) error {
	ok, n, err := mcp.ScanText(ct.Body, info.Size)
	if err != nil {
		return fmt.Errorf("blobs: read %q: %w", key, err)
	}
	if sk, isSeeker := ct.Body.(io.Seeker); isSeeker {
		if _, err := sk.Seek(0, io.SeekStart); err != nil {
			return fmt.Errorf("blobs: rewind %q: %w", key, err)
		}
	} else {
		ct.Body.Close()
		rc, info2, err := a.view(c).Open(c.Context(), key, nil)
		if err != nil {
			ct.Body = nil
			return fmt.Errorf("blobs: reopen %q: %w", key, err)
		}
		ct.Body = rc
		if info2.ETag != info.ETag || info2.Size != info.Size {
			// Changed in between: serve the new version as base64.
			ok, ct.Size, ct.MIMEType = false, info2.Size, mediaType(info2)
		}
	}
	ct.BodyText, ct.TextLen = ok, n
	return nil
}

// complete completes the key of blob:///{+key} from the keys that start
// with the value: the first 100, and whether more match.
func (a *App) complete(c *mcp.Call, arg, value string) (mcp.Completion, error) {
	if arg != "key" {
		return mcp.Completion{}, nil
	}
	page, err := a.view(c).List(c.Context(), value, "", 100)
	if err != nil {
		a.log.Debug("blobs: completion listing failed", "err", err)
		return mcp.Completion{}, nil
	}
	res := mcp.Completion{Values: make([]string, 0, len(page.Items)), HasMore: page.NextCursor != "", Total: -1}
	for _, it := range page.Items {
		res.Values = append(res.Values, it.Key)
	}
	if !res.HasMore {
		res.Total = len(res.Values)
	}
	return res, nil
}
