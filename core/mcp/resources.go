package mcp

import (
	"errors"
	"fmt"
	"mime"
	"strings"
	"time"

	"github.com/mcpblob/mcpblob/storage"
)

// resourceObj describes a stored blob as an MCP Resource.
func resourceObj(info storage.Info) obj {
	r := obj{
		"uri":      BlobURI(info.Key),
		"name":     info.Key,
		"mimeType": mediaType(info),
		"size":     info.Size,
		// SEP-2532: blobs prefer resources/stream (harmless to clients
		// that do not know the field).
		"streamable": true,
	}
	if info.Filename != "" {
		r["title"] = info.Filename
	}
	if !info.ModTime.IsZero() {
		r["annotations"] = obj{"lastModified": info.ModTime.UTC().Format(time.RFC3339)}
	}
	return r
}

func mediaType(info storage.Info) string {
	if info.MediaType == "" {
		return "application/octet-stream"
	}
	return info.MediaType
}

// isTextMediaType reports media types served as TextResourceContents when
// their bytes are valid UTF-8.
func isTextMediaType(mt string) bool {
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

func (s *Server) resourcesList(c *call) (any, error) {
	var cursor string
	if e := c.param("cursor", &cursor); e != nil {
		return nil, e
	}
	items := []any{}
	if cursor == "" && s.fixtures != nil {
		items = append(items, s.fixtures.resources()...)
	}
	page, err := s.backend.List(c.ctx, "", cursor, s.opts.PageSize)
	if err != nil {
		if errors.Is(err, storage.ErrInvalidCursor) {
			return nil, invalidParams("Invalid params: invalid cursor")
		}
		return nil, fmt.Errorf("mcp: list resources: %w", err)
	}
	for _, info := range page.Items {
		items = append(items, resourceObj(info))
	}
	res := obj{"resources": items}
	if page.NextCursor != "" {
		res["nextCursor"] = page.NextCursor
	}
	return res, nil
}

func (s *Server) resourcesTemplates(c *call) (any, error) {
	var cursor string
	if e := c.param("cursor", &cursor); e != nil {
		return nil, e
	}
	if cursor != "" {
		return nil, invalidParams("Invalid params: invalid cursor")
	}
	ts := []any{obj{
		"uriTemplate": BlobURITemplate,
		"name":        "blob",
		"title":       "Stored blob",
		"description": "A blob in the store, by key",
		"streamable":  true,
	}}
	if s.fixtures != nil {
		ts = append(ts, s.fixtures.templates()...)
	}
	return obj{"resourceTemplates": ts}, nil
}

// notFound is the era's resource-not-found error (SEP-2164).
func notFound(c *call, uri string) *Error {
	code := CodeResourceNotFound
	if c.modern {
		code = CodeInvalidParams
	}
	return newError(code, "Resource not found", obj{"uri": uri})
}

func (s *Server) resourcesRead(c *call) (any, error) {
	var uri string
	if e := c.param("uri", &uri); e != nil {
		return nil, e
	}
	if uri == "" {
		return nil, invalidParams("Invalid params: uri is required")
	}
	if s.fixtures != nil {
		if res, ok, err := s.fixtures.read(c, uri); ok || err != nil {
			return res, err
		}
	}
	key, ok := ParseBlobURI(uri)
	if !ok || storage.ValidateKey(key) != nil {
		return nil, notFound(c, uri)
	}
	rc, info, err := s.backend.Open(c.ctx, key, nil)
	if err != nil {
		if errors.Is(err, storage.ErrNotFound) || errors.Is(err, storage.ErrInvalidKey) {
			return nil, notFound(c, uri)
		}
		return nil, fmt.Errorf("mcp: open %q: %w", key, err)
	}
	var head obj
	if c.modern {
		head = obj{
			"resultType": "complete",
			"ttlMs":      s.opts.CacheTTL.Milliseconds(),
			"cacheScope": "private",
			"_meta":      obj{metaServerInfo: s.serverInfo()},
		}
	}
	br, err := s.newBlobBody(c.ctx, key, uri, rc, info, head)
	if err != nil {
		rc.Close()
		return nil, err
	}
	return br, nil
}
