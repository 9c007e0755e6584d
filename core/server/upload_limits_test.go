package server

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcpblob/mcpblob/core/server/blobsvc"
	"github.com/mcpblob/mcpblob/core/token"
)

// TestMultipartBounds: an upload body with too many parts, or a part with
// too many or too long header fields, is refused with a clear 400 and
// stores nothing (bd4921f took a part with 1,000 header fields).
func TestMultipartBounds(t *testing.T) {
	parallel(t)
	base, srv := startTestServer(t, Options{Backend: newLocalStore(t)})
	build := func(fields, headers, headerLen int) (string, []byte) {
		var b bytes.Buffer
		mw := multipart.NewWriter(&b)
		for i := range fields {
			_ = mw.WriteField(fmt.Sprintf("f%d", i), "x")
		}
		h := map[string][]string{"Content-Disposition": {`form-data; name="file"; filename="x.txt"`}, "Content-Type": {"text/plain"}}
		for i := range headers {
			h[fmt.Sprintf("X-H%d", i)] = []string{strings.Repeat("v", headerLen)}
		}
		w, _ := mw.CreatePart(h)
		_, _ = w.Write([]byte("hello"))
		_ = mw.Close()
		return mw.FormDataContentType(), b.Bytes()
	}
	for _, tc := range []struct {
		name                      string
		fields, headers, hdrBytes int
		status                    int
		code                      string
	}{
		{"ordinary", 2, 2, 10, 201, ""},
		{"too many parts", blobsvc.MaxParts, 0, 0, 400, "too_many_parts"},
		{"too many part headers", 0, 1000, 1, 400, "part_headers_too_large"},
		{"part headers too long", 0, 1, 100 << 10, 400, "part_headers_too_large"},
	} {
		link, err := srv.opts.Keyring.MintUpload(base, token.Upload{MaxSize: 1 << 20})
		if err != nil {
			t.Fatal(err)
		}
		ctype, body := build(tc.fields, tc.headers, tc.hdrBytes)
		resp, err := http.Post(link.URL, ctype, bytes.NewReader(body))
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.status || (tc.code != "" && !strings.Contains(string(got), `"`+tc.code+`"`)) {
			t.Errorf("%s: %d %s; want %d %s", tc.name, resp.StatusCode, got, tc.status, tc.code)
		}
		if n := len(storedUnder(t, srv.opts.Backend, "uploads/"+link.UploadID+"/")); (tc.status == 201) != (n == 1) {
			t.Errorf("%s: %d objects stored", tc.name, n)
		}
	}
}

// TestMalformedChunkedUpload: a chunked upload body with a bad chunk size
// is the client's mistake (400), not a server error (bd4921f: 500).
func TestMalformedChunkedUpload(t *testing.T) {
	parallel(t)
	base, srv := startTestServer(t, Options{Backend: newLocalStore(t)})
	host := strings.TrimPrefix(base, "http://")
	for _, size := range []string{"zz", "7fffffffffffffff"} {
		link, err := srv.opts.Keyring.MintUpload(base, token.Upload{MaxSize: 1 << 20})
		if err != nil {
			t.Fatal(err)
		}
		conn, err := net.Dial("tcp", host)
		if err != nil {
			t.Fatal(err)
		}
		conn.SetDeadline(time.Now().Add(10 * time.Second))
		path := link.URL[strings.Index(link.URL, "/u/"):]
		fmt.Fprintf(conn, "PUT %s HTTP/1.1\r\nHost: %s\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n%s\r\nabc\r\n0\r\n\r\n", path, host, size)
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatalf("chunk size %s: %v", size, err)
		}
		body, _ := io.ReadAll(resp.Body)
		conn.Close()
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("chunk size %s: %d %s; want 400", size, resp.StatusCode, body)
		}
		if n := len(storedUnder(t, srv.opts.Backend, "uploads/"+link.UploadID+"/")); n != 0 {
			t.Errorf("chunk size %s: %d objects stored", size, n)
		}
	}
}

// TestLongContentType: a Content-Type over storage.MaxMediaTypeLen is the
// client's mistake on every backend (bd4921f answered 500 on S3).
func TestLongContentType(t *testing.T) {
	parallel(t)
	for _, be := range byteplaneBackends() {
		t.Run(be.name, func(t *testing.T) {
			t.Parallel()
			base, _ := startTestServer(t, Options{Backend: be.new(t)})
			req, _ := http.NewRequest("PUT", base+"/v1/blobs/k", strings.NewReader("hello"))
			req.Header.Set("Content-Type", "text/plain; x="+strings.Repeat("a", 8<<10))
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusBadRequest {
				t.Errorf("PUT with an 8 KiB Content-Type: %d %s; want 400", resp.StatusCode, body)
			}
		})
	}
}
