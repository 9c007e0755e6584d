package server

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"net/textproto"
	"strings"
	"testing"
	"time"

	"github.com/mcpblob/mcpblob/core/blobs"
	"github.com/mcpblob/mcpblob/core/token"
)

// multipartBody builds a multipart/form-data body with one "file" part per
// (name, type, data) triple.
func multipartBody(t *testing.T, files ...[3]string) (string, []byte) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	if err := mw.WriteField("note", "ignored"); err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		h := textproto.MIMEHeader{}
		h.Set("Content-Disposition", fmt.Sprintf(`form-data; name="file"; filename=%q`, f[0]))
		h.Set("Content-Type", f[1])
		pw, err := mw.CreatePart(h)
		if err != nil {
			t.Fatal(err)
		}
		pw.Write([]byte(f[2]))
	}
	mw.Close()
	return mw.FormDataContentType(), buf.Bytes()
}

type uploadResp struct {
	Status   int    `json:"-"`
	UploadID string `json:"uploadId"`
	Blob     struct {
		Key, SHA256, MimeType string
		Size                  int64
	}
	Error struct{ Code, Message string }
}

func doUpload(t *testing.T, method, url, ctype string, body []byte, hdr map[string]string) uploadResp {
	t.Helper()
	req, _ := http.NewRequest(method, url, bytes.NewReader(body))
	req.Header.Set("Content-Type", ctype)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var r uploadResp
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("%s %s: %d %q", method, url, resp.StatusCode, b)
	}
	r.Status = resp.StatusCode
	return r
}

func hexSum(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// TestUploadEndpoint covers /u/{token}: multipart POST and raw PUT stored
// with the right bytes; reuse, forged and expired tokens, principal binding,
// maxSize, accept and sniffing refused with nothing stored; a truncated
// multipart body stores nothing.
func TestUploadEndpoint(t *testing.T) {
	parallel(t)
	st := newLocalStore(t)
	base, srv := startTestServer(t, Options{Backend: st, Auth: Auth{Keys: []string{HashKey("secret-a") + " alice", HashKey("secret-b") + " bob"}}})
	alice := map[string]string{"Authorization": "Bearer secret-a"}
	mint := func(u token.Upload) token.MintedURL {
		t.Helper()
		m, err := srv.opts.Keyring.MintUpload(base, u)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	data := bytes.Repeat([]byte("mcpblob "), 40000)

	m := mint(token.Upload{Principal: "alice", MaxSize: 1 << 20})
	ct, body := multipartBody(t, [3]string{"notes.txt", "text/plain", string(data)})
	r := doUpload(t, "POST", m.URL, ct, body, alice)
	if r.Status != 201 || r.UploadID != m.UploadID || r.Blob.Key != "uploads/"+m.UploadID+"/notes.txt" || r.Blob.SHA256 != hexSum(data) || r.Blob.MimeType != "text/plain" {
		t.Fatalf("multipart upload: %+v", r)
	}
	if r := doUpload(t, "POST", m.URL, ct, body, alice); r.Status != http.StatusConflict || r.Error.Code != "already_used" {
		t.Fatalf("reuse: %+v", r)
	}

	m = mint(token.Upload{Principal: "alice", Key: "raw/put.bin", MaxSize: 1 << 20})
	if r := doUpload(t, "PUT", m.URL, "application/octet-stream", data, alice); r.Status != 201 || r.Blob.Key != "raw/put.bin" || r.Blob.SHA256 != hexSum(data) {
		t.Fatalf("PUT: %+v", r)
	}
	if r := doUpload(t, "PUT", m.URL, "application/octet-stream", data, alice); r.Status != http.StatusConflict {
		t.Fatalf("PUT reuse: %+v", r)
	}
	before := len(listAll(t, st))

	refused := []struct {
		name   string
		url    string
		method string
		ctype  string
		body   []byte
		hdr    map[string]string
		status int
		code   string
	}{
		{"forged", m.URL[:len(m.URL)-4] + "AAAA", "POST", ct, body, alice, 403, "invalid_token"},
		{"expired", func() string {
			old := srv.opts.Keyring.WithClock(func() time.Time { return time.Now().Add(-time.Hour) })
			m, _ := old.MintUpload(base, token.Upload{Principal: "alice", MaxSize: 1 << 20, TTL: time.Minute})
			return m.URL
		}(), "POST", ct, body, alice, 410, "expired"},
		{"another principal", mint(token.Upload{Principal: "alice", MaxSize: 1 << 20}).URL, "POST", ct, body,
			map[string]string{"Authorization": "Bearer secret-b"}, 403, "forbidden"},
		{"over maxSize", mint(token.Upload{Principal: "alice", MaxSize: 1000}).URL, "POST", ct, body, alice, 413, "too_large"},
		{"over maxSize, chunked", mint(token.Upload{Principal: "alice", MaxSize: 1000}).URL, "PUT", "text/plain", nil, alice, 413, "too_large"},
		{"type not accepted", mint(token.Upload{Principal: "alice", MaxSize: 1 << 20, Accept: []string{"image/*"}}).URL, "POST", ct, body, alice, 415, "type_not_accepted"},
		{"type not accepted, extension list", mint(token.Upload{Principal: "alice", MaxSize: 1 << 20, Accept: []string{"image/png", ".pdf"}}).URL, "POST", ct, body, alice, 415, "type_not_accepted"},
		{"type lie", mint(token.Upload{Principal: "alice", MaxSize: 1 << 20}).URL, "PUT", "image/png", data, alice, 415, "type_mismatch"},
		{"not multipart", mint(token.Upload{Principal: "alice", MaxSize: 1 << 20}).URL, "POST", "application/json", []byte("{}"), alice, 415, "unsupported_media_type"},
	}
	for _, tc := range refused {
		t.Run(tc.name, func(t *testing.T) {
			var r uploadResp
			if tc.body == nil {
				// Unknown length: the limit must hold as bytes arrive.
				req, _ := http.NewRequest(tc.method, tc.url, io.MultiReader(bytes.NewReader(data), bytes.NewReader(data)))
				req.ContentLength = -1
				req.Header.Set("Content-Type", tc.ctype)
				req.Header.Set("Authorization", tc.hdr["Authorization"])
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				json.Unmarshal(b, &r)
				r.Status = resp.StatusCode
			} else {
				r = doUpload(t, tc.method, tc.url, tc.ctype, tc.body, tc.hdr)
			}
			if r.Status != tc.status || r.Error.Code != tc.code {
				t.Fatalf("got %d %+v, want %d %s", r.Status, r.Error, tc.status, tc.code)
			}
			if n := len(listAll(t, st)); n != before {
				t.Fatalf("%d objects stored after a refusal", n-before)
			}
		})
	}

	t.Run("extension accepted", func(t *testing.T) {
		m := mint(token.Upload{Principal: "alice", MaxSize: 1 << 20, Accept: []string{"image/png", ".pdf"}})
		ct, body := multipartBody(t, [3]string{"report.PDF", "application/octet-stream", "%PDF-1.7 tiny"})
		if r := doUpload(t, "POST", m.URL, ct, body, alice); r.Status != 201 {
			t.Fatalf("%+v", r)
		}
		before++
	})

	t.Run("multiple parts", func(t *testing.T) {
		data, _ := json.Marshal(blobs.UploadTokenData{Field: "files", Mode: "binary", Multiple: true})
		id := token.NewUploadID()
		tok, err := srv.opts.Keyring.Sign(token.Claims{Purpose: token.PurposeUpload, Principal: "alice", MaxSize: 1 << 20,
			Nonce: id, Expires: time.Now().Add(time.Minute), Data: data})
		if err != nil {
			t.Fatal(err)
		}
		ct, body := multipartBody(t, [3]string{"one.txt", "text/plain", "first"}, [3]string{"two.txt", "text/plain", "second"})
		if r := doUpload(t, "POST", base+"/u/"+tok, ct, body, alice); r.Status != 201 {
			t.Fatalf("%+v", r)
		}
		page, _ := st.List(context.Background(), "uploads/"+id+"/", "", 10)
		if len(page.Items) != 2 || page.Items[0].Key != "uploads/"+id+"/one.txt" || page.Items[1].SHA256 != hexSum([]byte("second")) {
			t.Fatalf("%+v", page.Items)
		}
		// A single-file link refuses a second part and stores nothing.
		m := mint(token.Upload{Principal: "alice", MaxSize: 1 << 20})
		if r := doUpload(t, "POST", m.URL, ct, body, alice); r.Status != 400 || r.Error.Code != "one_file" {
			t.Fatalf("%+v", r)
		}
		before += 2
		if n := len(listAll(t, st)); n != before {
			t.Fatalf("%d objects, want %d", n, before)
		}
	})

	t.Run("truncated multipart", func(t *testing.T) {
		m := mint(token.Upload{Principal: "alice", MaxSize: 1 << 20})
		u := strings.TrimPrefix(m.URL, "http://")
		host, path, _ := strings.Cut(u, "/")
		conn, err := net.Dial("tcp", host)
		if err != nil {
			t.Fatal(err)
		}
		cut := body[:len(body)/2]
		fmt.Fprintf(conn, "POST /%s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer secret-a\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n", path, host, ct, len(body))
		conn.Write(cut)
		conn.(*net.TCPConn).CloseWrite()
		io.Copy(io.Discard, conn)
		conn.Close()
		// Nothing may appear: an absence has no event to wait for, so
		// the store is watched for a while.
		deadline := time.Now().Add(2 * time.Second)
		for time.Now().Before(deadline) {
			if n := len(listAll(t, st)); n != before {
				t.Fatalf("a truncated upload stored %d objects", n-before)
			}
			time.Sleep(100 * time.Millisecond)
		}
		// The link is still unused.
		if r := doUpload(t, "POST", m.URL, ct, body, alice); r.Status != 201 {
			t.Fatalf("upload after the truncated one: %+v", r)
		}
	})
	if _, err := st.Stat(context.Background(), "raw/put.bin"); err != nil {
		t.Fatal(err)
	}
}
