package offload

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"strings"
	"sync"
	"testing"
)

type bufStream struct{ bytes.Buffer }

func (*bufStream) Flush() error { return nil }

// memStore keeps offloaded blobs in memory.
type memStore struct {
	mu    sync.Mutex
	blobs map[string][]byte // principal/id
}

type memWriter struct {
	s             *memStore
	key, mimeType string
	buf           bytes.Buffer
}

func (s *memStore) Create(_ context.Context, principal, id, mediaType string) (Writer, error) {
	return &memWriter{s: s, key: principal + "/" + id, mimeType: mediaType}, nil
}

func (s *memStore) Open(context.Context, string, string) (io.ReadCloser, Info, error) {
	return nil, Info{}, ErrNotFound
}

func (s *memStore) Link(context.Context, string, string) (string, Info, error) {
	return "", Info{}, ErrNotFound
}

func (s *memStore) Delete(_ context.Context, principal, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.blobs, principal+"/"+id)
	return nil
}

func (w *memWriter) Write(p []byte) (int, error) { return w.buf.Write(p) }

func (w *memWriter) Commit(context.Context) (Info, error) {
	w.s.mu.Lock()
	defer w.s.mu.Unlock()
	if w.s.blobs == nil {
		w.s.blobs = map[string][]byte{}
	}
	w.s.blobs[w.key] = w.buf.Bytes()
	return Info{Size: int64(w.buf.Len()), MediaType: w.mimeType}, nil
}

func (w *memWriter) Abort() {}

func (s *memStore) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.blobs)
}

// TestSSEFraming: CRLF line ends, a data field split over lines with an id
// line between them, a priming event and a comment around it.
func TestSSEFraming(t *testing.T) {
	store := &memStore{}
	off, err := New(Options{Over: 1 << 10, Store: store}, nil)
	if err != nil {
		t.Fatal(err)
	}
	blob := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, 4<<10))
	before := "id: 1\r\ndata:\r\n\r\n: keep-alive\r\n\r\n"
	after := "data: not json\n\n"
	in := before + "event: message\r\ndata: {\"jsonrpc\":\"2.0\",\"id\":5,\r\nid: 9\r\ndata:\"result\":{\"content\":[{\"type\":\"image\",\"data\":\"" +
		blob + "\",\"mimeType\":\"image/x-t\"}]}}\r\n\r\n" + after
	var out bufStream
	opts, stored := off.Rewrite(t.Context(), "alice")
	s := &SSE{W: &out, Max: 1 << 20, Relayed: func(int64) {}, BrokeOff: func() error { return io.ErrUnexpectedEOF },
		Failed: func(f *Failure, err error, spilled bool) []byte { t.Errorf("failed: %v", err); return nil }}
	if err := s.Relay(strings.NewReader(in), opts, stored); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	if !strings.HasPrefix(got, before+"event: message\r\ndata: ") || !strings.HasSuffix(got, "\nid: 9\r\n\n"+after) {
		t.Fatalf("the events around the answer changed, or the id line was lost:\n%q", got)
	}
	data := strings.TrimPrefix(got, before+"event: message\r\ndata: ")
	data = strings.ReplaceAll(data[:strings.Index(data, "\nid: 9")], "\ndata: ", "\n")
	var a struct {
		ID     int
		Result struct {
			Content []struct{ Type, URI, MimeType string }
		}
	}
	if err := json.Unmarshal([]byte(data), &a); err != nil || a.ID != 5 || len(a.Result.Content) != 1 ||
		a.Result.Content[0].Type != "resource_link" || a.Result.Content[0].MimeType != "image/x-t" {
		t.Fatalf("the answer event: %q (%v)", data, err)
	}
	if _, ok := ID(a.Result.Content[0].URI); !ok || store.count() != 1 {
		t.Errorf("link %q, %d stored", a.Result.Content[0].URI, store.count())
	}
}

// TestSSEBrokenBlob: a blob that is not base64 is answered with Failed's
// error event in place of its event, and nothing stays stored.
func TestSSEBrokenBlob(t *testing.T) {
	store := &memStore{}
	off, _ := New(Options{Over: 16, Store: store}, nil)
	in := "data: {\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{\"content\":[{\"type\":\"image\",\"mimeType\":\"image/x-t\",\"data\":\"" +
		strings.Repeat("QUJD", 64) + "!!!!\"}]}}\n\n"
	var out bufStream
	var got *Failure
	opts, stored := off.Rewrite(t.Context(), "alice")
	s := &SSE{W: &out, Max: 1 << 20, Relayed: func(int64) {}, BrokeOff: func() error { return io.ErrUnexpectedEOF },
		Failed: func(f *Failure, err error, spilled bool) []byte { got = f; return []byte("data: error\n\n") }}
	if err := s.Relay(strings.NewReader(in), opts, stored); err != nil {
		t.Fatal(err)
	}
	if got == nil || got.Kind != KindMalformed || out.String() != "data: error\n\n" || store.count() != 0 {
		t.Fatalf("failure %+v, sent %q, %d stored", got, out.String(), store.count())
	}
}
