package server

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"testing"

	"github.com/mcpblob/mcpblob/core/server/blobsvc"
)

// TestPutBlobIngest: PUT /v1/blobs goes through the ingest path with its
// checks relaxed (empty bodies and any declared type are stored as sent),
// the limit enforced as bytes arrive, and body errors told apart from
// storage's.
func TestPutBlobIngest(t *testing.T) {
	parallel(t)
	c := newBPClient(t, Options{Backend: newLocalStore(t), Service: blobsvc.Options{MaxUploadBytes: 1000}})
	if r := c.put("lie.png", []byte("GIF89a, not a PNG"), map[string]string{"Content-Type": "image/png"}); r.status != 201 {
		t.Fatalf("PUT with a contradicted type: %d %s", r.status, r.body)
	}
	req, _ := http.NewRequest("PUT", c.base+"/v1/blobs/big", io.MultiReader(bytes.NewReader(make([]byte, 600)), bytes.NewReader(make([]byte, 600))))
	req.ContentLength = -1
	resp, b := sendRefused(t, req)
	if want := `{"error":{"code":"too_large","message":"body over the upload limit"}}`; resp.StatusCode != 413 || string(b) != want {
		t.Fatalf("chunked over the limit: %d %s", resp.StatusCode, b)
	}
	if _, err := c.srv.opts.Backend.Stat(context.Background(), "big"); err == nil {
		t.Fatal("an oversized PUT left a blob")
	}
}
