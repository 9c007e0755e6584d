package blobs

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/mcpblob/mcpblob/core/mcp"
)

// TestUploadFileInputs sends upload_file each kind of bad input (and the
// good ones the SEP requires servers to accept) and checks the exact
// isError text and that nothing is stored on failure.
func TestUploadFileInputs(t *testing.T) {
	t.Parallel()
	st := newLocalStore(t)
	s := newToolServer(t, st, mcp.Options{MaxFileBytes: 1 << 20},
		Options{UploadAccept: []string{"image/*", "text/plain", "application/pdf"}})
	c := s.client(t, legacyVersion, `{}`)
	big := base64.StdEncoding.EncodeToString(make([]byte, 2<<20))
	png := base64.StdEncoding.EncodeToString([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"))
	const accepted = "image/*, text/plain, application/pdf"
	bad := []struct {
		name, args, want string
	}{
		{"non-data scheme", `"key":"a","file":"https://example.com/cat.png"`,
			`Argument "file": scheme "https" is not supported: a data: URI is required`},
		{"not a URI", `"file":"hello"`, `Argument "file": not a URI: a data: URI is required`},
		{"malformed", `"key":"a","file":"data:image/png;base64"`, `Argument "file": malformed data URI: missing ',' separator`},
		{"bad base64", `"key":"a","file":"data:text/plain;base64,aGV*bG8="`, `Argument "file": malformed data URI: bad base64 at byte 3`},
		{"over maxSize, streamed to storage", `"key":"a","file":"data:image/png;base64,` + big + `"`,
			`Argument "file": file is larger than maxSize 1048576 bytes`},
		{"over maxSize, spooled", `"file":"data:image/png;base64,` + big + `","key":"a"`,
			`Argument "file": file is larger than maxSize 1048576 bytes`},
		{"type not in accept", `"key":"a","file":"data:application/zip;base64,UEsDBA=="`,
			`Argument "file": media type "application/zip" is not accepted (accept: ` + accepted + `)`},
		{"type lie", `"key":"a","file":"data:image/png;base64,aGVsbG8="`,
			`Argument "file": content does not match the declared media type "image/png"`},
		{"type lie, other format", `"key":"a","file":"data:application/pdf;base64,` + png + `"`,
			`Argument "file": content is image/png, not the declared media type "application/pdf"`},
		{"empty file", `"key":"a","file":"data:text/plain;base64,"`, `Argument "file": file is empty`},
		{"missing", `"key":"a"`, `Argument "file" is required`},
		{"bad key", `"key":"../x","file":"data:text/plain,hi"`, `Argument "key": not a valid key (contains a ".." segment)`},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			c := c.in(t)
			r := c.callTool("upload_file", "{"+tc.args+"}")
			if r.Status != 200 {
				t.Fatalf("status %d: %.300s", r.Status, r.Body)
			}
			res := toolOf(t, r.Message)
			if !res.IsError || len(res.Content) != 1 || res.Content[0].Text != tc.want {
				t.Fatalf("got %+v\nwant isError %q", res, tc.want)
			}
			if bytes.Contains(r.Body, []byte(big[:64])) {
				t.Fatal("the data URI leaked into the error")
			}
			if keys := listAll(t, st); len(keys) != 0 {
				t.Fatalf("stored %v after a failure", keys)
			}
		})
	}
	good := []struct {
		name, args, key, content, mt string
	}{
		{"percent-encoded", `"key":"p.txt","file":"data:text/plain,hello%20world"`, "p.txt", "hello world", "text/plain"},
		{"escaped slash", `"key":"s.txt","file":"data:text\/plain;base64,aGVsbG8="`, "s.txt", "hello", "text/plain"},
		{"unicode-escaped slash", `"file":"data:text\u002Fplain;charset=UTF-8;base64,aGVsbG8=","key":"u.txt"`, "u.txt", "hello", "text/plain; charset=utf-8"},
		{"png, filename, default key", `"filename":"dot.png","file":"data:image/png;base64,` + png + `"`, "", "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "image/png"},
	}
	for _, tc := range good {
		t.Run(tc.name, func(t *testing.T) {
			c := c.in(t)
			r := c.callTool("upload_file", "{"+tc.args+"}")
			res := toolOf(t, r.Message)
			if r.Status != 200 || res.IsError {
				t.Fatalf("status %d: %s", r.Status, r.Body)
			}
			sc := res.StructuredContent
			if sc.SHA256 != hexSum([]byte(tc.content)) || sc.Size != int64(len(tc.content)) || sc.MimeType != tc.mt {
				t.Fatalf("structuredContent %+v", sc)
			}
			if tc.key != "" && sc.Key != tc.key {
				t.Fatalf("key %q, want %q", sc.Key, tc.key)
			}
			if tc.key == "" && (!strings.HasPrefix(sc.Key, "uploads/") || !strings.HasSuffix(sc.Key, "/dot.png")) {
				t.Fatalf("default key %q", sc.Key)
			}
			if len(res.Content) != 2 || res.Content[1].Type != "resource_link" || res.Content[1].URI != sc.URI {
				t.Fatalf("content %+v", res.Content)
			}
			if err := st.Delete(t.Context(), sc.Key); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestUploadFileParamsFirst sends params before method and arguments before
// name: nothing is known about the call while the data URI arrives, so it is
// spooled (decoded) and stored once the tool runs.
func TestUploadFileParamsFirst(t *testing.T) {
	t.Parallel()
	s := newToolServer(t, newLocalStore(t), mcp.Options{}, Options{})
	c := s.client(t, legacyVersion, `{}`)
	payload := make([]byte, 300<<10)
	for i := range payload {
		payload[i] = byte(i * 7)
	}
	body := `{"params":{"arguments":{"file":"data:application/octet-stream;base64,` + base64.StdEncoding.EncodeToString(payload) +
		`","key":"late/key.bin"},"name":"upload_file"},"id":"x","method":"tools/call","jsonrpc":"2.0"}`
	r := c.raw(body)
	res := toolOf(t, r.Message)
	if r.Status != 200 || res.IsError || res.StructuredContent.SHA256 != hexSum(payload) || res.StructuredContent.Key != "late/key.bin" {
		t.Fatalf("%d %.400s", r.Status, r.Body)
	}
	// A large string that is not a data URI, in any params member, is
	// spooled too and still bounded by the message limit.
	huge := strings.Repeat("x", 5<<20)
	if r := c.callTool("list_blobs", `{"prefix":"`+huge+`"}`); r.Status != http.StatusRequestEntityTooLarge {
		t.Fatalf("5 MiB plain string: %d %.200s", r.Status, r.Body)
	}
}

// TestUploadFileOverSSE: with a progressToken the call answers over SSE and
// runs after the request handler returned; the file it streamed into
// storage must survive until the tool commits it.
func TestUploadFileOverSSE(t *testing.T) {
	t.Parallel()
	s := newToolServer(t, newLocalStore(t), mcp.Options{}, Options{})
	c := s.client(t, legacyVersion, `{}`).with(map[string]string{"Accept": "text/event-stream"})
	payload := strings.Repeat("stream me ", 30000)
	params := `{"_meta":{"progressToken":"p1"},"name":"upload_file","arguments":{"key":"sse/a.txt","file":"data:text/plain;base64,` +
		base64.StdEncoding.EncodeToString([]byte(payload)) + `"}}`
	events, err := c.Events(c.NewRequest(t.Context(), "tools/call", params))
	if err != nil {
		t.Fatal(err)
	}
	defer events.Close()
	m, _, err := events.Result()
	if err != nil {
		t.Fatal(err)
	}
	if res := toolOf(t, m); res.IsError || res.StructuredContent.SHA256 != hexSum([]byte(payload)) {
		t.Fatalf("%+v", res)
	}
}

// TestUploadFileModern: the 2026-07-28 era checks the key argument against
// Mcp-Param-Blob-Key before the tool runs; a mismatch stores nothing.
func TestUploadFileModern(t *testing.T) {
	t.Parallel()
	st := newLocalStore(t)
	s := newToolServer(t, st, mcp.Options{}, Options{})
	c := s.client(t, modernVersion, `{}`).with(map[string]string{"Mcp-Param-Blob-Key": "m/ok.txt"})
	payload := bytes.Repeat([]byte("modern "), 20000)
	args := func(key string) string {
		return `{"key":"` + key + `","file":"data:text/plain;base64,` + base64.StdEncoding.EncodeToString(payload) + `"}`
	}
	r := c.callTool("upload_file", args("m/ok.txt"))
	res := toolOf(t, r.Message)
	if r.Status != 200 || res.IsError || res.ResultType != "complete" || res.StructuredContent.Key != "m/ok.txt" {
		t.Fatalf("%d %.300s", r.Status, r.Body)
	}
	if r := c.callTool("upload_file", args("m/other.txt")); r.Status != http.StatusBadRequest || !bytes.Contains(r.Body, []byte("-32020")) {
		t.Fatalf("header mismatch: %d %.300s", r.Status, r.Body)
	}
	if keys := listAll(t, st); len(keys) != 1 {
		t.Fatalf("stored %v", keys)
	}
	// The stored text reads back (resources/read carries Mcp-Name).
	r, err := c.Call(t.Context(), "resources/read", `{"uri":`+jsonString(res.StructuredContent.URI)+`}`)
	if err != nil {
		t.Fatal(err)
	}
	var read struct {
		Contents []struct{ URI, Text string }
	}
	if r.Status != 200 || json.Unmarshal(r.Result, &read) != nil || len(read.Contents) != 1 ||
		read.Contents[0].URI != res.StructuredContent.URI || read.Contents[0].Text != string(payload) {
		t.Fatalf("resources/read: %d %.300s", r.Status, r.Body)
	}
}
