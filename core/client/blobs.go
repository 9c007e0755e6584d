package client

import (
	"context"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Blob describes a stored blob, as the control API's blob object.
type Blob struct {
	URI      string    `json:"uri"`
	Key      string    `json:"key"`
	Size     int64     `json:"size"`
	SHA256   string    `json:"sha256"`
	MimeType string    `json:"mimeType"`
	Filename string    `json:"filename,omitempty"`
	ETag     string    `json:"etag"`
	Modified time.Time `json:"modified"`
	Expires  time.Time `json:"expires"` // the blob's own expiry (ttlSeconds); zero: none
}

// PutOptions are the optional parameters of Put.
type PutOptions struct {
	ContentType string // default application/octet-stream
	Filename    string // kept as the blob's original filename
	Size        int64  // body length when known (> 0), sent as Content-Length
	SHA256      string // hex digest the server verifies (x-mcp-sha256); mismatch stores nothing
	IfNotExists bool   // fail with ErrExists instead of replacing
	// TTL is the blob's lifetime, whole seconds (ttlSeconds, sent as
	// x-mcp-ttl-seconds); 0: no expiry.
	TTL time.Duration
}

// Put streams body to key. The blob becomes visible only when the server has
// the whole body (and, with SHA256 set, verified it).
func (c *Client) Put(ctx context.Context, key string, body io.Reader, opts PutOptions) (Blob, error) {
	req, err := c.newRequest(ctx, http.MethodPut, c.blobURL(key), body)
	if err != nil {
		return Blob{}, err
	}
	if opts.Size > 0 {
		req.ContentLength = opts.Size
	} else if body != nil {
		req.ContentLength = -1 // chunked: the size is not known up front
	}
	ct := opts.ContentType
	if ct == "" {
		ct = "application/octet-stream"
	}
	req.Header.Set("Content-Type", ct)
	if opts.Filename != "" {
		req.Header.Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": opts.Filename}))
	}
	if opts.SHA256 != "" {
		req.Header.Set("x-mcp-sha256", opts.SHA256)
	}
	if opts.IfNotExists {
		req.Header.Set("If-None-Match", "*")
	}
	if opts.TTL > 0 {
		req.Header.Set("x-mcp-ttl-seconds", ttlSeconds(opts.TTL))
	}
	resp, err := c.do(req)
	if err != nil {
		return Blob{}, err
	}
	defer resp.Body.Close()
	var b Blob
	if err := decodeJSON(resp.Body, &b); err != nil {
		return Blob{}, fmt.Errorf("client: put %q: %w", key, err)
	}
	return b, nil
}

// ttlSeconds writes a TTL as whole seconds, rounded up so that a
// sub-second TTL is not 0.
func ttlSeconds(d time.Duration) string {
	return strconv.FormatInt(int64((d+time.Second-1)/time.Second), 10)
}

// Stat returns key's metadata (a HEAD request).
func (c *Client) Stat(ctx context.Context, key string) (Blob, error) {
	req, err := c.newRequest(ctx, http.MethodHead, c.blobURL(key), nil)
	if err != nil {
		return Blob{}, err
	}
	resp, err := c.do(req)
	if err != nil {
		return Blob{}, err
	}
	resp.Body.Close()
	return blobFromHeaders(key, resp.Header, resp.ContentLength), nil
}

// Reader is an open blob body. Blob describes the whole object; Offset is
// where this body starts (non-zero only for a ranged Open that the server honoured).
type Reader struct {
	io.ReadCloser
	Blob   Blob
	Offset int64
}

// Open streams key from offset (0 for all of it). With ifRange set to an
// ETag, the server sends the range only if the blob still has that ETag and
// the whole blob otherwise: check Reader.Offset.
func (c *Client) Open(ctx context.Context, key string, offset int64, ifRange string) (*Reader, error) {
	req, err := c.newRequest(ctx, http.MethodGet, c.blobURL(key), nil)
	if err != nil {
		return nil, err
	}
	if offset > 0 {
		req.Header.Set("Range", fmt.Sprintf("bytes=%d-", offset))
		if ifRange != "" {
			req.Header.Set("If-Range", ifRange)
		}
	}
	resp, err := c.do(req)
	if err != nil {
		return nil, err
	}
	r := &Reader{ReadCloser: resp.Body, Blob: blobFromHeaders(key, resp.Header, resp.ContentLength)}
	if resp.StatusCode == http.StatusPartialContent {
		start, total, err := parseContentRange(resp.Header.Get("Content-Range"))
		if err != nil {
			resp.Body.Close()
			return nil, fmt.Errorf("client: get %q: %w", key, err)
		}
		r.Offset, r.Blob.Size = start, total
	}
	return r, nil
}

// Delete removes key.
func (c *Client) Delete(ctx context.Context, key string) error {
	req, err := c.newRequest(ctx, http.MethodDelete, c.blobURL(key), nil)
	if err != nil {
		return err
	}
	resp, err := c.do(req)
	if err != nil {
		return err
	}
	return resp.Body.Close()
}

// Page is one page of List.
type Page struct {
	Items      []Blob `json:"items"`
	NextCursor string `json:"nextCursor,omitempty"`
}

// List returns blobs whose keys start with prefix, after cursor ("" for the
// first page). limit <= 0 lets the server choose the page size.
func (c *Client) List(ctx context.Context, prefix, cursor string, limit int) (Page, error) {
	q := url.Values{}
	if prefix != "" {
		q.Set("prefix", prefix)
	}
	if cursor != "" {
		q.Set("cursor", cursor)
	}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	u := c.base.String() + "/v1/blobs"
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	var p Page
	err := c.doJSON(ctx, http.MethodGet, u, nil, &p)
	return p, err
}

func blobFromHeaders(key string, h http.Header, contentLength int64) Blob {
	b := Blob{
		URI:      "blob:///" + key,
		Key:      key,
		Size:     contentLength,
		SHA256:   h.Get("x-mcp-sha256"),
		MimeType: h.Get("Content-Type"),
		ETag:     h.Get("ETag"),
	}
	if t, err := http.ParseTime(h.Get("Last-Modified")); err == nil {
		b.Modified = t
	}
	if _, params, err := mime.ParseMediaType(h.Get("Content-Disposition")); err == nil {
		b.Filename = params["filename"]
	}
	return b
}

// parseContentRange reads "bytes start-end/total".
func parseContentRange(v string) (start, total int64, err error) {
	rest, ok := strings.CutPrefix(v, "bytes ")
	if !ok {
		return 0, 0, fmt.Errorf("bad Content-Range %q", v)
	}
	rng, tot, ok := strings.Cut(rest, "/")
	first, _, ok2 := strings.Cut(rng, "-")
	if !ok || !ok2 {
		return 0, 0, fmt.Errorf("bad Content-Range %q", v)
	}
	if start, err = strconv.ParseInt(first, 10, 64); err != nil {
		return 0, 0, fmt.Errorf("bad Content-Range %q", v)
	}
	if total, err = strconv.ParseInt(tot, 10, 64); err != nil {
		return 0, 0, fmt.Errorf("bad Content-Range %q", v)
	}
	return start, total, nil
}
