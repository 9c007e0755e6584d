package server

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"github.com/mcpblob/mcpblob/core/token"
	"github.com/mcpblob/mcpblob/storage"
)

// TestUploadErrorTable checks the upload endpoints' error table
// (uploadErrorOf) answer by answer: status, code and exact message, with
// nothing stored.
func TestUploadErrorTable(t *testing.T) {
	parallel(t)
	st := newLocalStore(t)
	base, srv := startTestServer(t, Options{Backend: st})
	mint := func(u token.Upload) string {
		t.Helper()
		u.Principal = "alice"
		m, err := srv.opts.Keyring.MintUpload(base, u)
		if err != nil {
			t.Fatal(err)
		}
		return m.URL
	}
	png := "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"
	ct, lie := multipartBody(t, [3]string{"pic.png", "image/png", "GIF89a tiny"})
	zct, zipped := multipartBody(t, [3]string{"report.pdf", "application/octet-stream", "PK\x03\x04zip"})
	for _, tc := range []struct {
		name, url, method, ctype string
		body                     []byte
		status                   int
		code, msg                string
	}{
		{"empty", mint(token.Upload{MaxSize: 1 << 20}), "PUT", "text/plain", nil,
			400, "empty", "the file is empty"},
		{"too large", mint(token.Upload{MaxSize: 10}), "PUT", "text/plain", []byte("eleven byte"),
			413, "too_large", "the file is larger than the limit of 10 bytes"},
		{"type mismatch", mint(token.Upload{MaxSize: 1 << 20}), "POST", ct, lie,
			415, "type_mismatch", `content is image/gif, not the declared media type "image/png"`},
		{"declared type not accepted", mint(token.Upload{MaxSize: 1 << 20, Accept: []string{"image/*"}}), "PUT", "text/plain; charset=UTF-8", []byte("hi"),
			415, "type_not_accepted", `media type "text/plain" is not accepted (accept: image/*)`},
		{"sniffed type not accepted", mint(token.Upload{MaxSize: 1 << 20, Accept: []string{"application/*"}}), "PUT", "application/x-thing", []byte(png),
			415, "type_not_accepted", `media type "image/png" is not accepted (accept: application/*)`},
		{"extension contradicted", mint(token.Upload{MaxSize: 1 << 20, Accept: []string{"image/png", ".pdf"}}), "POST", zct, zipped,
			415, "type_not_accepted", `media type "application/zip" is not accepted (accept: image/png, .pdf)`},
		{"malformed multipart", mint(token.Upload{MaxSize: 1 << 20}), "POST", "multipart/form-data; boundary=xyz", []byte("no boundary here"),
			400, "bad_multipart", "malformed multipart body; nothing was stored"},
		{"invalid key", mint(token.Upload{MaxSize: 1 << 20, Key: storage.ReservedDir + "/x"}), "PUT", "text/plain", []byte("x"),
			400, "invalid_key", "the file name does not make a valid key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(tc.method, tc.url, bytes.NewReader(tc.body))
			req.Header.Set("Content-Type", tc.ctype)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			msg, _ := json.Marshal(tc.msg)
			want := `{"error":{"code":"` + tc.code + `","message":` + string(msg) + `}}`
			if resp.StatusCode != tc.status || string(b) != want {
				t.Fatalf("got %d %s, want %d %s", resp.StatusCode, b, tc.status, want)
			}
			if keys := listAll(t, st); len(keys) != 0 {
				t.Fatalf("stored after a refusal: %v", keys)
			}
		})
	}

	// An octet-stream upload keeps its declared type (ingest reports the
	// sniffed one, but storage fixed the type at Create).
	r := doUpload(t, "PUT", mint(token.Upload{MaxSize: 1 << 20, Key: "p.bin"}), "application/octet-stream", []byte(png), nil)
	if r.Status != 201 || r.Blob.MimeType != "application/octet-stream" {
		t.Fatalf("octet-stream PNG: %+v", r)
	}
}
