package tusb

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// client is a minimal tus 1.0.0 client (core protocol and creation): what
// tus-js-client does with a fixed chunk size, and nothing else, so the
// harness spends as little as it can between chunks. No checksums: tusd
// and mcpblob get the same requests.
type client struct {
	hc   *http.Client
	base string // http://host:port
	// patches is how long each PATCH of the last upload took, request to
	// answer, in order (reset by create).
	patches []time.Duration
}

// create POSTs a new upload of size bytes to the creation URL endpoint
// (path) with meta as Upload-Metadata and returns the upload's URL.
func (c *client) create(ctx context.Context, path string, size int64, meta map[string]string) (string, error) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, c.base+path, nil)
	req.Header.Set("Tus-Resumable", "1.0.0")
	req.Header.Set("Upload-Length", strconv.FormatInt(size, 10))
	var pairs []string
	for k, v := range meta {
		pairs = append(pairs, k+" "+base64.StdEncoding.EncodeToString([]byte(v)))
	}
	req.Header.Set("Upload-Metadata", strings.Join(pairs, ","))
	c.patches = c.patches[:0]
	resp, err := c.do(req, http.StatusCreated)
	if err != nil {
		return "", fmt.Errorf("tus create: %w", err)
	}
	loc, err := url.Parse(resp.Header.Get("Location"))
	if err != nil || loc.Path == "" {
		return "", fmt.Errorf("tus create: Location %q", resp.Header.Get("Location"))
	}
	base, _ := url.Parse(c.base + path)
	return base.ResolveReference(loc).String(), nil
}

// head returns the upload's offset.
func (c *client) head(ctx context.Context, u string) (int64, error) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodHead, u, nil)
	req.Header.Set("Tus-Resumable", "1.0.0")
	resp, err := c.do(req, http.StatusOK)
	if err != nil {
		return 0, fmt.Errorf("tus HEAD: %w", err)
	}
	return strconv.ParseInt(resp.Header.Get("Upload-Offset"), 10, 64)
}

// patch sends body at offset and returns the new offset the server answers.
func (c *client) patch(ctx context.Context, u string, offset int64, body io.Reader, n int64) (int64, error) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodPatch, u, body)
	req.ContentLength = n
	req.Header.Set("Tus-Resumable", "1.0.0")
	req.Header.Set("Content-Type", "application/offset+octet-stream")
	req.Header.Set("Upload-Offset", strconv.FormatInt(offset, 10))
	resp, err := c.do(req, http.StatusNoContent)
	if err != nil {
		return 0, fmt.Errorf("tus PATCH at %d: %w", offset, err)
	}
	got, err := strconv.ParseInt(resp.Header.Get("Upload-Offset"), 10, 64)
	if err != nil || got != offset+n {
		return got, fmt.Errorf("tus PATCH at %d: Upload-Offset %q, want %d", offset, resp.Header.Get("Upload-Offset"), offset+n)
	}
	return got, nil
}

// send PATCHes raw[from:] in chunks of chunk bytes, each chunk ending on a
// multiple of chunk (so a resumed upload's first PATCH only fills up to the
// grid), and returns the bytes sent.
func (c *client) send(ctx context.Context, u string, raw []byte, from, chunk int64) (int64, error) {
	off := from
	for off < int64(len(raw)) {
		end := min(int64(len(raw)), (off/chunk+1)*chunk)
		t0 := time.Now()
		next, err := c.patch(ctx, u, off, bytes.NewReader(raw[off:end]), end-off)
		c.patches = append(c.patches, time.Since(t0))
		if err != nil {
			return off - from, err
		}
		off = next
	}
	return off - from, nil
}

// upload creates an upload of raw and sends it in chunks.
func (c *client) upload(ctx context.Context, path string, raw []byte, chunk int64, meta map[string]string) error {
	u, err := c.create(ctx, path, int64(len(raw)), meta)
	if err != nil {
		return err
	}
	_, err = c.send(ctx, u, raw, 0, chunk)
	return err
}

// do sends req and checks the answer's status, reading its body away.
func (c *client) do(req *http.Request, want int) (*http.Response, error) {
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, err
	}
	ans, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != want {
		return nil, fmt.Errorf("http %d: %.200s", resp.StatusCode, ans)
	}
	return resp, nil
}
