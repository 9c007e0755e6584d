package client

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
)

// The tus 1.0.0 requests PutFile makes (docs/uploads.md, /v1/tus/).

const tusVersion = "1.0.0"

// errNoTus: the server has no /v1/tus/ (an older server, or a store that
// keeps no upload state); PutFile then sends one PUT.
var errNoTus = errors.New("client: the server does not serve resumable uploads")

// protocolError is an answer that breaks the tus protocol (a missing or
// malformed header); retrying does not help.
type protocolError struct{ msg string }

func (e *protocolError) Error() string { return "client: " + e.msg }

func (c *Client) tusRequest(ctx context.Context, method, url string, body []byte) (*http.Request, error) {
	req, err := c.newRequest(ctx, method, url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Tus-Resumable", tusVersion)
	return req, nil
}

// tusCreate creates an upload of size bytes to store as key and returns its URL.
func (c *Client) tusCreate(ctx context.Context, key string, size int64, opts PutFileOptions) (string, error) {
	req, err := c.tusRequest(ctx, http.MethodPost, c.base.String()+"/v1/tus/", nil)
	if err != nil {
		return "", err
	}
	req.Header.Set("Upload-Length", strconv.FormatInt(size, 10))
	req.Header.Set("Upload-Metadata", tusMetadata(key, opts))
	resp, err := c.do(req)
	var e *Error
	if errors.As(err, &e) && (e.Status == http.StatusNotFound || e.Status == http.StatusMethodNotAllowed || e.Status == http.StatusNotImplemented) {
		return "", errNoTus
	}
	if err != nil {
		return "", err
	}
	resp.Body.Close()
	loc, err := resp.Location()
	if err != nil {
		return "", &protocolError{"tus creation answered no Location"}
	}
	return loc.String(), nil
}

func tusMetadata(key string, opts PutFileOptions) string {
	pairs := []string{"key " + base64.StdEncoding.EncodeToString([]byte(key))}
	if opts.Filename != "" {
		pairs = append(pairs, "filename "+base64.StdEncoding.EncodeToString([]byte(opts.Filename)))
	}
	if opts.ContentType != "" {
		pairs = append(pairs, "filetype "+base64.StdEncoding.EncodeToString([]byte(opts.ContentType)))
	}
	if opts.TTL > 0 {
		pairs = append(pairs, "ttlSeconds "+base64.StdEncoding.EncodeToString([]byte(ttlSeconds(opts.TTL))))
	}
	return strings.Join(pairs, ",")
}

// tusOffset HEADs an upload: the bytes the server holds, durably, and the
// upload's length.
func (c *Client) tusOffset(ctx context.Context, upload string) (offset, length int64, err error) {
	req, err := c.tusRequest(ctx, http.MethodHead, upload, nil)
	if err != nil {
		return 0, 0, err
	}
	resp, err := c.do(req)
	if err != nil {
		return 0, 0, err
	}
	resp.Body.Close()
	offset, err = headerSize(resp.Header, "Upload-Offset")
	if err != nil {
		return 0, 0, err
	}
	length, err = headerSize(resp.Header, "Upload-Length")
	return offset, length, err
}

// tusPatch sends chunk at offset, with its sha256 in Upload-Checksum, and
// returns the server's new offset.
func (c *Client) tusPatch(ctx context.Context, upload string, offset int64, chunk []byte, progress Progress, total int64) (int64, error) {
	req, err := c.tusRequest(ctx, http.MethodPatch, upload, chunk)
	if err != nil {
		return 0, err
	}
	if progress != nil {
		req.Body = io.NopCloser(ProgressReader(bytes.NewReader(chunk), total, func(done, total int64) { progress(offset+done, total) }))
	}
	sum := sha256.Sum256(chunk)
	req.Header.Set("Content-Type", "application/offset+octet-stream")
	req.Header.Set("Upload-Offset", strconv.FormatInt(offset, 10))
	req.Header.Set("Upload-Checksum", "sha256 "+base64.StdEncoding.EncodeToString(sum[:]))
	resp, err := c.do(req)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return headerSize(resp.Header, "Upload-Offset")
}

// tusTerminate deletes an upload; a failure is only the server's garbage,
// which it sweeps when the upload expires.
func (c *Client) tusTerminate(ctx context.Context, upload string) {
	if req, err := c.tusRequest(ctx, http.MethodDelete, upload, nil); err == nil {
		if resp, err := c.do(req); err == nil {
			resp.Body.Close()
		}
	}
}

func headerSize(h http.Header, name string) (int64, error) {
	n, err := strconv.ParseInt(h.Get(name), 10, 64)
	if err != nil || n < 0 {
		return 0, &protocolError{fmt.Sprintf("tus answer without a valid %s (%q)", name, h.Get(name))}
	}
	return n, nil
}
