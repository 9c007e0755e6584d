package client

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"
)

// LinkRequest asks for a signed download link.
type LinkRequest struct {
	Key        string `json:"key"`
	TTLSeconds int    `json:"ttlSeconds,omitempty"` // default: the server's (15 min)
	Filename   string `json:"filename,omitempty"`   // Content-Disposition filename of the download
	SingleUse  bool   `json:"singleUse,omitempty"`
}

// Link is a minted download link.
type Link struct {
	URL       string    `json:"url"`
	ExpiresAt time.Time `json:"expiresAt"`
}

// Link mints a signed /d/{token} download link for a blob.
func (c *Client) Link(ctx context.Context, r LinkRequest) (Link, error) {
	var l Link
	err := c.doJSON(ctx, http.MethodPost, c.base.String()+"/v1/links", r, &l)
	return l, err
}

// UploadRequest asks for a signed upload endpoint.
type UploadRequest struct {
	Key        string   `json:"key,omitempty"` // default: the server picks one
	MaxSize    int64    `json:"maxSize"`
	Accept     []string `json:"accept,omitempty"`
	TTLSeconds int      `json:"ttlSeconds,omitempty"`
}

// Upload is a minted upload endpoint: send the bytes to URL with Method.
type Upload struct {
	URL       string    `json:"url"`
	Method    string    `json:"method"`
	UploadID  string    `json:"uploadId"`
	PageURL   string    `json:"pageUrl"` // the upload page (/upload/{token}) for a person with a browser
	ExpiresAt time.Time `json:"expiresAt"`
}

// NewUpload mints a signed /u/{token} upload endpoint.
func (c *Client) NewUpload(ctx context.Context, r UploadRequest) (Upload, error) {
	var u Upload
	err := c.doJSON(ctx, http.MethodPost, c.base.String()+"/v1/uploads", r, &u)
	return u, err
}

func decodeJSON(r io.Reader, out any) error {
	if err := json.NewDecoder(io.LimitReader(r, 16<<20)).Decode(out); err != nil {
		return fmt.Errorf("decode answer: %w", err)
	}
	return nil
}
