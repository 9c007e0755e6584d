package s3

import (
	"bytes"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcpblob/mcpblob/storage"
	"github.com/mcpblob/mcpblob/storage/storagetest"
	"github.com/mcpblob/mcpblob/storage/storagetest/s3test"
)

// do sends a request with a plain net/http client and returns the response
// with its body read.
func do(t *testing.T, method, u string, body []byte, header http.Header) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, u, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, b
}

func TestPresign(t *testing.T) {
	srv := s3test.Shared(t)
	// This process reaches the S3 service at 127.0.0.1; clients at "localhost".
	_, port, _ := net.SplitHostPort(srv.Endpoint)
	public := "localhost:" + port
	s := newStore(t, Options{PublicEndpoint: "http://" + public})
	ctx := t.Context()
	const key = "dir/report 1.bin"
	data := storagetest.Bytes(3, 0, 100_000)
	w, _ := s.Create(ctx, key, storage.CreateOptions{MediaType: "application/x-test"})
	w.Write(data)
	info, err := w.Commit(ctx)
	if err != nil {
		t.Fatal(err)
	}

	u, err := s.PresignGet(ctx, key, time.Minute, storage.PresignOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if u.Host != public {
		t.Errorf("presigned URL host = %q, want the public endpoint %q", u.Host, public)
	}
	resp, body := do(t, http.MethodGet, u.String(), nil, nil)
	if resp.StatusCode != http.StatusOK || !bytes.Equal(body, data) {
		t.Fatalf("GET: %s, %d bytes", resp.Status, len(body))
	}
	if got := resp.Header.Get("ETag"); got != info.ETag {
		t.Errorf("GET ETag = %q, want %q", got, info.ETag)
	}
	if got := resp.Header.Get("Content-Type"); got != "application/x-test" {
		t.Errorf("GET Content-Type = %q", got)
	}

	resp, body = do(t, http.MethodGet, u.String(), nil, http.Header{"Range": {"bytes=1000-1999"}})
	if resp.StatusCode != http.StatusPartialContent || !bytes.Equal(body, data[1000:2000]) {
		t.Errorf("ranged GET: %s, %d bytes", resp.Status, len(body))
	}
	if got := resp.Header.Get("Content-Range"); got != "bytes 1000-1999/100000" {
		t.Errorf("Content-Range = %q", got)
	}

	const disposition = `attachment; filename="report.pdf"; filename*=UTF-8''r%C3%A9port.pdf`
	u, err = s.PresignGet(ctx, key, time.Minute, storage.PresignOptions{ContentType: "application/pdf", ContentDisposition: disposition})
	if err != nil {
		t.Fatal(err)
	}
	resp, body = do(t, http.MethodGet, u.String(), nil, nil)
	if resp.StatusCode != http.StatusOK || !bytes.Equal(body, data) {
		t.Fatalf("GET with overrides: %s, %d bytes", resp.Status, len(body))
	}
	if got := resp.Header.Get("Content-Type"); got != "application/pdf" {
		t.Errorf("overridden Content-Type = %q", got)
	}
	if got := resp.Header.Get("Content-Disposition"); got != disposition {
		t.Errorf("overridden Content-Disposition = %q, want %q", got, disposition)
	}
	// Tampering with an override breaks the signature.
	resp, _ = do(t, http.MethodGet, strings.Replace(u.String(), "application%2Fpdf", "text%2Fhtml", 1), nil, nil)
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("GET with a tampered override: %s, want 403", resp.Status)
	}

	// PUT, with and without a signed Content-Type.
	u, err = s.PresignPut(ctx, "up/plain", time.Minute, storage.PresignOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if resp, body := do(t, http.MethodPut, u.String(), []byte("uploaded"), nil); resp.StatusCode != http.StatusOK {
		t.Fatalf("PUT: %s %s", resp.Status, body)
	}
	if got, err := s.Stat(ctx, "up/plain"); err != nil || got.Size != 8 || got.SHA256 != "" {
		t.Errorf("Stat after presigned PUT = %+v, %v", got, err)
	}
	u, err = s.PresignPut(ctx, "up/typed.csv", time.Minute, storage.PresignOptions{ContentType: "text/csv"})
	if err != nil {
		t.Fatal(err)
	}
	if resp, _ := do(t, http.MethodPut, u.String(), []byte("a,b"), http.Header{"Content-Type": {"text/html"}}); resp.StatusCode != http.StatusForbidden {
		t.Errorf("PUT with another Content-Type than signed: %s, want 403", resp.Status)
	}
	if resp, body := do(t, http.MethodPut, u.String(), []byte("a,b"), http.Header{"Content-Type": {"text/csv"}}); resp.StatusCode != http.StatusOK {
		t.Fatalf("PUT with the signed Content-Type: %s %s", resp.Status, body)
	}
	if got, err := s.Stat(ctx, "up/typed.csv"); err != nil || got.MediaType != "text/csv" {
		t.Errorf("Stat after typed PUT = %+v, %v", got, err)
	}

	// A presigned GET of a missing key is a URL like any other; S3 answers 404.
	u, err = s.PresignGet(ctx, "missing", time.Minute, storage.PresignOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if resp, _ := do(t, http.MethodGet, u.String(), nil, nil); resp.StatusCode != http.StatusNotFound {
		t.Errorf("GET of a missing key: %s", resp.Status)
	}

	for _, ttl := range []time.Duration{0, time.Millisecond, 8 * 24 * time.Hour} {
		if _, err := s.PresignGet(ctx, key, ttl, storage.PresignOptions{}); err == nil {
			t.Errorf("PresignGet with lifetime %v succeeded", ttl)
		}
	}
	for _, bad := range storagetest.InvalidKeys {
		_, err := s.PresignGet(ctx, bad, time.Minute, storage.PresignOptions{})
		if !errors.Is(err, storage.ErrInvalidKey) {
			t.Errorf("PresignGet(%q): %v, want ErrInvalidKey", bad, err)
		}
		_, err = s.PresignPut(ctx, bad, time.Minute, storage.PresignOptions{})
		if !errors.Is(err, storage.ErrInvalidKey) {
			t.Errorf("PresignPut(%q): %v, want ErrInvalidKey", bad, err)
		}
	}
}

// TestPresignOffline: presigning makes no request, even with the server
// unreachable.
func TestPresignOffline(t *testing.T) {
	var rt countingTransport
	s := newStore(t, Options{Transport: &rt, PublicEndpoint: "https://blobs.example.com"})
	before := rt.requests.Load()
	u, err := s.PresignGet(t.Context(), "k", time.Hour, storage.PresignOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.PresignPut(t.Context(), "k", time.Hour, storage.PresignOptions{ContentType: "text/plain"}); err != nil {
		t.Fatal(err)
	}
	if n := rt.requests.Load() - before; n != 0 {
		t.Errorf("presigning made %d requests", n)
	}
	if u.Scheme != "https" || u.Host != "blobs.example.com" || u.Query().Get("X-Amz-Credential") == "" {
		t.Errorf("presigned URL = %s", u.Redacted())
	}
}
