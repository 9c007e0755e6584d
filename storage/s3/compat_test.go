package s3

import (
	"net/http"
	"slices"
	"sync"
	"testing"

	"github.com/mcpblob/mcpblob/storage"
)

// TestCursorToken: a token a cursor cannot carry (SeaweedFS's bare keys)
// is dropped, an opaque ASCII one (AWS's, MinIO's) kept.
func TestCursorToken(t *testing.T) {
	for token, want := range map[string]string{
		"1/ZXhhbXBsZQ==": "1/ZXhhbXBsZQ==",
		"dir/ä b 000009": "",
		"a b":            "",
		"":               "",
	} {
		if got := cursorToken(token); got != want {
			t.Errorf("cursorToken(%q) = %q, want %q", token, got, want)
		}
		if _, _, err := decodeListCursor(encodeListCursor("k", cursorToken(token))); err != nil {
			t.Errorf("cursor with the token of %q: %v", token, err)
		}
	}
}

// TestListPagesAtKeysWithSpaces pages through keys with spaces and UTF-8,
// so that pages end at such keys: the service's continuation token may be
// the key itself (SeaweedFS), and every cursor List hands out must list on.
func TestListPagesAtKeysWithSpaces(t *testing.T) {
	s := newStore(t, Options{})
	keys := seed(t, s, "dir/ä b ", 25)
	var got []string
	cur := ""
	for range 10 {
		page, err := s.List(t.Context(), "dir/", cur, 10)
		if err != nil {
			t.Fatalf("List after %d keys: %v", len(got), err)
		}
		got = append(got, listedKeys(page)...)
		if cur = page.NextCursor; cur == "" {
			break
		}
	}
	if !slices.Equal(got, keys) {
		t.Errorf("listed %q, want %q", got, keys)
	}
}

// TestPathConflictRaced: a writer of "a/b" passes the path check, then
// another node writes "a" before the PUT of "a/b" arrives. The service
// stores both, as AWS does (and SeaweedFS, which keeps keys as files and
// folders, too): the race the package documentation describes.
func TestPathConflictRaced(t *testing.T) {
	other := newStore(t, Options{})
	hook := &hookTransport{}
	var once sync.Once
	hook.set(func(r *http.Request) error {
		if r.Method == http.MethodPut && r.URL.Path == "/"+other.bucket+"/a/b" {
			once.Do(func() {
				if _, err := writeAll(t.Context(), other, "a", []byte("parent"), storage.CreateOptions{}); err != nil {
					t.Error(err)
				}
			})
		}
		return nil
	})
	s := newStore(t, Options{Bucket: other.bucket, Transport: hook})
	_, err := writeAll(t.Context(), s, "a/b", []byte("child"), storage.CreateOptions{})
	if err != nil {
		t.Fatalf("Commit of a/b: %v", err)
	}
	for _, key := range []string{"a", "a/b"} {
		if _, err := s.Stat(t.Context(), key); err != nil {
			t.Errorf("Stat %s: %v", key, err)
		}
	}
}
