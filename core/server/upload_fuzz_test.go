package server

import (
	"bytes"
	"context"
	"io"
	"mime/multipart"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/mcpblob/mcpblob/core/server/front"
	"github.com/mcpblob/mcpblob/core/token"
	"github.com/mcpblob/mcpblob/storage"
	"github.com/mcpblob/mcpblob/storage/localfs"
)

// FuzzUploadMultipart sends arbitrary multipart bodies to an upload link,
// through the whole handler, and checks them against mime/multipart: the
// answer is a 201 or a 4xx (never a server error), a refused upload stores
// nothing, and an accepted one stores exactly the bytes of its "file" part.
func FuzzUploadMultipart(f *testing.F) {
	seed := func(parts ...[3]string) {
		var b bytes.Buffer
		mw := multipart.NewWriter(&b)
		_ = mw.SetBoundary("BOUNDARY")
		for _, p := range parts {
			w, _ := mw.CreatePart(map[string][]string{
				"Content-Disposition": {`form-data; name="` + p[0] + `"; filename="` + p[1] + `"`},
				"Content-Type":        {"application/octet-stream"}})
			_, _ = w.Write([]byte(p[2]))
		}
		_ = mw.Close()
		f.Add(b.Bytes())
	}
	seed([3]string{"file", "a.bin", "hello"})
	seed([3]string{"note", "", "x"}, [3]string{"file", "../../etc/passwd", "data"})
	seed([3]string{"file", "a.bin", ""})
	seed([3]string{"file", "a.bin", "one"}, [3]string{"file", "b.bin", "two"})
	f.Add([]byte("--BOUNDARY\r\nContent-Disposition: form-data; name=\"file\"\r\n\r\nunterminated"))
	f.Add([]byte("--BOUNDARY--\r\n"))
	be, err := localfs.Open(f.TempDir(), localfs.Options{})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { be.Close() })
	srv, err := New(Options{Backend: be, Front: front.Options{Listen: "127.0.0.1:0"}})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		link, err := srv.opts.Keyring.MintUpload("http://127.0.0.1", token.Upload{MaxSize: 1 << 20})
		if err != nil {
			t.Fatal(err)
		}
		var req fasthttp.Request
		req.Header.SetMethod("POST")
		req.SetRequestURI(link.URL)
		req.Header.SetContentType("multipart/form-data; boundary=BOUNDARY")
		req.SetBody(body)
		out := string(benchServe(srv, &req))
		status, _, _ := strings.Cut(out, "\r\n")
		stored := storedUnder(t, be, "uploads/"+link.UploadID+"/")
		switch {
		case strings.Contains(status, " 201 "):
			checkStored(t, be, body, stored)
		case strings.Contains(status, " 4"):
			if len(stored) > 0 {
				t.Fatalf("refused upload (%s) stored %v", status, stored)
			}
		default:
			t.Fatalf("answer %q; want 201 or 4xx\n%s", status, out)
		}
	})
}

// checkStored compares what an accepted upload stored with the "file" parts
// mime/multipart finds in body.
func checkStored(t *testing.T, be storage.Backend, body []byte, stored []string) {
	t.Helper()
	mr := multipart.NewReader(bytes.NewReader(body), "BOUNDARY")
	var want [][]byte
	for {
		p, err := mr.NextPart()
		if err != nil {
			break
		}
		if p.FormName() == "file" {
			b, _ := io.ReadAll(p)
			want = append(want, b)
		}
	}
	if len(want) != 1 || len(stored) != 1 {
		t.Fatalf("accepted upload stored %v; mime/multipart finds %d file parts", stored, len(want))
	}
	rc, _, err := be.Open(context.Background(), stored[0], nil)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	got, _ := io.ReadAll(rc)
	if !bytes.Equal(got, want[0]) {
		t.Fatalf("stored %q; the file part holds %q", got, want[0])
	}
}
