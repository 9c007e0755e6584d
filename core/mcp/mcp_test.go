package mcp

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mcpblob/mcpblob/storage"
)

func TestBlobURIRoundTrip(t *testing.T) {
	for _, key := range []string{"a", "docs/readme.txt", "dir with space/ünï.txt", "q?x#y%z", "a+b=c&d", "日本/語"} {
		uri := BlobURI(key)
		if strings.ContainsAny(uri[len(BlobURIPrefix):], " ?#") {
			t.Errorf("BlobURI(%q) = %q: unescaped delimiter", key, uri)
		}
		got, ok := ParseBlobURI(uri)
		if !ok || got != key {
			t.Errorf("ParseBlobURI(%q) = %q, %v; want %q", uri, got, ok, key)
		}
	}
	if got := BlobURI("dir with space/x"); got != "blob:///dir%20with%20space/x" {
		t.Errorf("BlobURI = %q", got)
	}
	for _, bad := range []string{"blob:///", "blob://x/y", "file:///a", "blob:///a%2", "blob:///a%zz", "blob:///%ff", "blob:///a?b"} {
		if k, ok := ParseBlobURI(bad); ok {
			t.Errorf("ParseBlobURI(%q) = %q, want failure", bad, k)
		}
	}
}

func TestDecodeHeaderValue(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		ok       bool
	}{
		{"plain", "plain", true},
		{"  padded\t", "padded", true},
		{"=?base64?SGVsbG8=?=", "Hello", true},
		{"=?base64?SGVsbG8?=", "", false},     // missing padding
		{"=?base64?SGVs!!!bG8=?=", "", false}, // bad alphabet
		{"=?base64?SGVsbG8=", "=?base64?SGVsbG8=", true},
		{"SGVsbG8=?=", "SGVsbG8=?=", true},
		{"=?base64?w7xuw68=?=", "ünï", true},
	} {
		got, ok := decodeHeaderValue(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("decodeHeaderValue(%q) = %q, %v; want %q, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func TestCheckParamHeaders(t *testing.T) {
	var hs []paramHeader
	collectParamHeaders(map[string]any{"type": "object", "properties": map[string]any{
		"key":   map[string]any{"type": "string", "x-mcp-header": "Blob-Key"},
		"n":     map[string]any{"type": "integer", "x-mcp-header": "N"},
		"flag":  map[string]any{"type": "boolean", "x-mcp-header": "Flag"},
		"inner": map[string]any{"type": "object", "properties": map[string]any{"r": map[string]any{"type": "string", "x-mcp-header": "Region"}}},
	}}, nil, &hs)
	if len(hs) != 4 {
		t.Fatalf("collected %d headers", len(hs))
	}
	args := json.RawMessage(`{"key":"a b","n":42,"flag":true,"inner":{"r":"eu"}}`)
	good := HeaderMap{"Mcp-Param-Blob-Key": "a b", "mcp-param-n": "42.0", "Mcp-Param-Flag": "true", "Mcp-Param-Region": "=?base64?ZXU=?="}
	if e := checkParamHeaders(good, hs, args); e != nil {
		t.Fatalf("good headers rejected: %v", e)
	}
	for name, h := range map[string]HeaderMap{
		"mismatch": {"Mcp-Param-Blob-Key": "a c", "Mcp-Param-N": "42", "Mcp-Param-Flag": "true", "Mcp-Param-Region": "eu"},
		"missing":  {"Mcp-Param-N": "42", "Mcp-Param-Flag": "true", "Mcp-Param-Region": "eu"},
		"number":   {"Mcp-Param-Blob-Key": "a b", "Mcp-Param-N": "41", "Mcp-Param-Flag": "true", "Mcp-Param-Region": "eu"},
		"bool":     {"Mcp-Param-Blob-Key": "a b", "Mcp-Param-N": "42", "Mcp-Param-Flag": "True", "Mcp-Param-Region": "eu"},
	} {
		if e := checkParamHeaders(h, hs, args); e == nil || e.Code != CodeHeaderMismatch || e.Status != 400 {
			t.Errorf("%s: got %v, want -32020/400", name, e)
		}
	}
	// Null or absent values need no header, and must not have one.
	if e := checkParamHeaders(HeaderMap{}, hs, json.RawMessage(`{"key":null}`)); e != nil {
		t.Errorf("null value: %v", e)
	}
	if e := checkParamHeaders(HeaderMap{"Mcp-Param-N": "1"}, hs, json.RawMessage(`{}`)); e == nil {
		t.Error("header without a body value accepted")
	}
}

func TestEscapeMatchesEncodingJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 200; i++ {
		b := make([]byte, r.IntN(300))
		for j := range b {
			b[j] = byte(r.IntN(128))
		}
		s := strings.ToValidUTF8(string(b)+"ü€😀", "")
		got := `"` + string(appendEscaped(nil, []byte(s))) + `"`
		var back string
		if err := json.Unmarshal([]byte(got), &back); err != nil || back != s {
			t.Fatalf("escape of %q = %s does not round-trip: %v", s, got, err)
		}
		if int64(len(got)-2) != escapedLen([]byte(s)) {
			t.Fatalf("escapedLen mismatch for %q", s)
		}
	}
}

func TestScanText(t *testing.T) {
	// A multi-byte rune straddling the chunk boundary must not look invalid.
	s := strings.Repeat("a", textChunk-1) + "€" + strings.Repeat("\"", 10)
	ok, n, err := scanText(strings.NewReader(s), int64(len(s)))
	if err != nil || !ok || n != escapedLen([]byte(s)) {
		t.Fatalf("scanText = %v, %d, %v", ok, n, err)
	}
	for _, bad := range []string{"ok\xff", strings.Repeat("a", textChunk-1) + "\xe2\x82", "\xc3"} {
		if ok, _, _ := scanText(strings.NewReader(bad), int64(len(bad))); ok {
			t.Errorf("scanText accepted invalid UTF-8 %q", bad[len(bad)-2:])
		}
	}
	if _, _, err := scanText(strings.NewReader("short"), 10); err == nil {
		t.Error("short object not reported")
	}
	if !utf8.ValidString(s) {
		t.Fatal("bad test input")
	}
}

func TestWriteBase64(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{0, 1, 2, 3, 4, rawChunk - 1, rawChunk, rawChunk + 1, 3*rawChunk + 2} {
		src := make([]byte, n)
		for i := range src {
			src[i] = byte(r.Uint32())
		}
		var out bytes.Buffer
		if err := writeBase64(&out, iotestHalf(bytes.NewReader(src)), int64(n)); err != nil {
			t.Fatal(err)
		}
		if want := base64.StdEncoding.EncodeToString(src); out.String() != want {
			t.Fatalf("n=%d: base64 differs", n)
		}
	}
	if err := writeBase64(io.Discard, strings.NewReader("abc"), 4); err != errShortObject {
		t.Fatalf("short object: %v", err)
	}
}

// iotestHalf returns a reader that returns at most half of what is asked.
func iotestHalf(r io.Reader) io.Reader { return &halfReader{r} }

type halfReader struct{ r io.Reader }

func (h *halfReader) Read(p []byte) (int, error) {
	if len(p) > 1 {
		p = p[:len(p)/2]
	}
	return h.r.Read(p)
}

// recorder is a ResponseWriter that keeps everything in memory.
type recorder struct {
	status int
	header map[string]string
	body   bytes.Buffer
	size   int64
}

func (r *recorder) SetStatus(code int)           { r.status = code }
func (r *recorder) SetHeader(name, value string) { r.header[name] = value }
func (r *recorder) SetBody(b []byte)             { r.body.Write(b) }
func (r *recorder) SetBodyStream(size int64, write func(StreamWriter) error) {
	r.size = size
	if err := write(flushBuffer{&r.body}); err != nil {
		panic(err)
	}
}

type flushBuffer struct{ *bytes.Buffer }

func (flushBuffer) Flush() error { return nil }

// streamBackend serves one object from a non-seekable reader, so the text
// path must reopen; changed makes the second Open return another version.
type streamBackend struct {
	storage.Backend
	data    string
	mt      string
	opens   int
	changed bool
}

func (b *streamBackend) Open(_ context.Context, key string, _ *storage.Range) (io.ReadCloser, storage.Info, error) {
	b.opens++
	etag := `"v1"`
	data := b.data
	if b.changed && b.opens > 1 {
		etag, data = `"v2"`, b.data+"!"
	}
	return io.NopCloser(strings.NewReader(data)), storage.Info{Key: key, Size: int64(len(data)), MediaType: b.mt, ETag: etag}, nil
}

func TestReadTextReopen(t *testing.T) {
	for _, changed := range []bool{false, true} {
		be := &streamBackend{data: "line 1\n\"quoted\" ünï\n", mt: "text/plain", changed: changed}
		s, err := NewServer(Options{Backend: be})
		if err != nil {
			t.Fatal(err)
		}
		sess := s.newSession("sid", Version20251125, nil, s.baseCtxDeadline())
		s.sessions["sid"] = sess
		// Bypass the session token: serve a call directly.
		c := &call{srv: s, version: Version20251125, id: json.RawMessage(`1`), method: "resources/read",
			params: map[string]json.RawMessage{"uri": json.RawMessage(`"blob:///t.txt"`)}, sess: sess, logLevel: -1, header: HeaderMap{}}
		rec := &recorder{header: map[string]string{}}
		s.respond(rec, c, s.methods["resources/read"], acceptance{json: true, sse: true})
		if int64(rec.body.Len()) != rec.size {
			t.Fatalf("changed=%v: Content-Length %d but %d bytes written", changed, rec.size, rec.body.Len())
		}
		var msg struct {
			Result struct {
				Contents []struct {
					Text *string `json:"text"`
					Blob *string `json:"blob"`
				} `json:"contents"`
			} `json:"result"`
		}
		if err := json.Unmarshal(rec.body.Bytes(), &msg); err != nil {
			t.Fatalf("changed=%v: %v: %s", changed, err, rec.body.String())
		}
		ct := msg.Result.Contents[0]
		if !changed && (ct.Text == nil || *ct.Text != be.data) {
			t.Fatalf("text = %v", ct.Text)
		}
		if changed {
			if ct.Blob == nil {
				t.Fatal("a changed object should fall back to base64")
			}
			if b, _ := base64.StdEncoding.DecodeString(*ct.Blob); string(b) != be.data+"!" {
				t.Fatalf("blob = %q", b)
			}
		}
	}
}
