package s3

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/mcpblob/mcpblob/storage"
	"github.com/mcpblob/mcpblob/storage/internal/cursor"
)

func TestListCursorRoundTrip(t *testing.T) {
	for _, tc := range []struct{ key, token string }{
		{"a", ""}, {"dir/ä b", "1/ZXhhbXBsZQ==[minio_cache:v2,id:x]"}, {longKey(), strings.Repeat("t", maxListToken)},
	} {
		c := encodeListCursor(tc.key, tc.token)
		key, token, err := decodeListCursor(c)
		if err != nil || key != tc.key || token != tc.token {
			t.Errorf("decode(encode(%q, %q)) = %q, %q, %v", tc.key, tc.token, key, token, err)
		}
	}
	if key, token, err := decodeListCursor(cursor.Encode("old/key")); key != "old/key" || token != "" || err != nil {
		t.Errorf("key-only cursor decodes to %q, %q, %v", key, token, err)
	}
	if key, token, err := decodeListCursor(""); key != "" || token != "" || err != nil {
		t.Errorf(`decode("") = %q, %q, %v`, key, token, err)
	}
}

// longKey returns a valid key of storage.MaxKeyLen bytes.
func longKey() string {
	seg := strings.Repeat("k", 204)
	return strings.Join([]string{seg, seg, seg, seg, seg}, "/")
}

func TestListCursorInvalid(t *testing.T) {
	raw := func(s string) string { return cursor.Encode(s) } // base64 of any bytes
	for _, c := range []string{
		"!!!", raw("../x"), raw("a\x00"), raw("\x00tok"), raw("a\x00tok en"), raw("a\x00tok\x00x"),
		raw(".mcpblob/x\x00tok"), raw("a\x00" + strings.Repeat("t", maxListToken+1)),
		strings.Repeat("A", maxCursorLen+4),
	} {
		if _, _, err := decodeListCursor(c); !errors.Is(err, storage.ErrInvalidCursor) {
			t.Errorf("decode(%.40q) error = %v, want ErrInvalidCursor", c, err)
		}
	}
}

func FuzzDecodeListCursor(f *testing.F) {
	f.Add("")
	f.Add(encodeListCursor("a/b", "token"))
	f.Add(cursor.Encode("a\x00"))
	f.Fuzz(func(t *testing.T, c string) {
		key, token, err := decodeListCursor(c)
		if err != nil {
			if !errors.Is(err, storage.ErrInvalidCursor) {
				t.Fatalf("error %v is not ErrInvalidCursor", err)
			}
			return
		}
		if key != "" && storage.ValidateKey(key) != nil {
			t.Fatalf("decoded invalid key %q", key)
		}
		if token != "" && !validListToken(token) {
			t.Fatalf("decoded invalid token %q", token)
		}
		if key2, token2, err := decodeListCursor(encodeListCursor(key, token)); key != "" && (err != nil || key2 != key || token2 != token) {
			t.Fatalf("re-encoding %q, %q gives %q, %q, %v", key, token, key2, token2, err)
		}
	})
}

// seed writes n tiny objects prefix+"%06d" with the metadata a one-part
// write leaves, from concurrent PUTs, and returns their keys in order.
func seed(t testing.TB, s *Store, prefix string, n int) []string {
	t.Helper()
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("%s%06d", prefix, i)
	}
	ctx := context.WithoutCancel(t.Context())
	work := make(chan string)
	var wg sync.WaitGroup
	var failed sync.Once
	for range 32 {
		wg.Go(func() {
			for key := range work {
				sum := sha256.Sum256([]byte(key))
				opts := minio.PutObjectOptions{ContentType: "text/plain", UserMetadata: map[string]string{metaSHA256: hex.EncodeToString(sum[:])}}
				if _, err := s.client.PutObject(ctx, s.bucket, key, bytes.NewReader([]byte(key)), int64(len(key)), opts); err != nil {
					failed.Do(func() { t.Error(err) })
				}
			}
		})
	}
	for _, key := range keys {
		work <- key
	}
	close(work)
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	return keys
}

// listAll pages through prefix with limit, checking that every page but
// the last is full and carries a continuation token.
func listAll(t *testing.T, s *Store, prefix string, limit int) []string {
	t.Helper()
	var keys []string
	cur := ""
	for {
		page, err := s.List(t.Context(), prefix, cur, limit)
		if err != nil {
			t.Fatal(err)
		}
		for _, info := range page.Items {
			keys = append(keys, info.Key)
			want := sha256.Sum256([]byte(info.Key))
			if info.SHA256 != hex.EncodeToString(want[:]) || info.MediaType != "text/plain" {
				t.Fatalf("listed %+v", info)
			}
		}
		if page.NextCursor == "" {
			return keys
		}
		if _, token, err := decodeListCursor(page.NextCursor); err != nil || token == "" || len(page.Items) != limit {
			t.Fatalf("page of %d items, cursor token %q, %v", len(page.Items), token, err)
		}
		cur = page.NextCursor
	}
}

// TestListPagesWithTokens: each page is one listing request continuing
// the last (objects cost a HEAD each besides on a service that does not
// list their metadata: TestListUsesListingMetadata).
func TestListPagesWithTokens(t *testing.T) {
	var rt countingTransport
	s := newStore(t, Options{Transport: &rt})
	want := seed(t, s, "k", 250)
	before := rt.listings.Load()
	if got := listAll(t, s, "", 7); !slices.Equal(got, want) {
		t.Fatalf("listed %d keys, want %d in order", len(got), len(want))
	}
	if n, pages := rt.listings.Load()-before, int64(250/7+1); n != pages {
		t.Errorf("%d listing requests for %d pages", n, pages)
	}
}

func TestListPrefixWithCursor(t *testing.T) {
	s := newStore(t, Options{})
	seed(t, s, "a/", 10)
	want := seed(t, s, "b/", 25)
	seed(t, s, "c", 10)
	if got := listAll(t, s, "b/", 4); !slices.Equal(got, want) {
		t.Fatalf("listed %q, want %q", got, want)
	}
}

// TestListForgedToken: a cursor whose token the service rejects or that
// would resume before its key, or one holding a key alone, gives the page
// that follows the key.
func TestListForgedToken(t *testing.T) {
	s := newStore(t, Options{})
	keys := seed(t, s, "k", 30)
	ctx := t.Context()
	first, err := s.List(ctx, "", "", 10)
	if err != nil {
		t.Fatal(err)
	}
	want, err := s.List(ctx, "", first.NextCursor, 10)
	if err != nil {
		t.Fatal(err)
	}
	last, _, _ := decodeListCursor(first.NextCursor)
	for name, cur := range map[string]string{
		"forged":   encodeListCursor(last, "Zm9yZ2Vk"), // MinIO: list after "forged"
		"rejected": encodeListCursor(last, "azAwMDAwOQ"),
		"key only": cursor.Encode(last),
	} {
		page, err := s.List(ctx, "", cur, 10)
		if err != nil || !slices.Equal(listedKeys(page), keys[10:20]) || !slices.Equal(listedKeys(page), listedKeys(want)) || page.NextCursor == "" {
			t.Errorf("%s token: page %q, cursor %q, %v; want %q", name, listedKeys(page), page.NextCursor, err, keys[10:20])
		}
	}
}

func listedKeys(page storage.Page) []string {
	var keys []string
	for _, info := range page.Items {
		keys = append(keys, info.Key)
	}
	return keys
}

// BenchmarkListPage times a page of 100 from the middle of a folder of 100
// and of one of 20,000 keys (next to each other in one bucket), through a
// cursor from the previous page as a client pages; "keyonly" strips the
// token from the cursor, as List listed before (StartAfter).
func BenchmarkListPage(b *testing.B) {
	s := newStore(b, Options{})
	start := time.Now()
	seed(b, s, "small/", 100)
	seed(b, s, "large/", 20000)
	b.Logf("seeded 20,100 objects in %v", time.Since(start))
	for _, folder := range []string{"small/", "large/"} {
		for _, keyOnly := range []bool{false, true} {
			name := strings.TrimSuffix(folder, "/")
			if keyOnly {
				name += "-keyonly"
			}
			b.Run(name, func(b *testing.B) { benchmarkPages(b, s, folder, keyOnly) })
		}
	}
}

func benchmarkPages(b *testing.B, s *Store, folder string, keyOnly bool) {
	ctx := b.Context()
	cur := ""
	for b.Loop() {
		page, err := s.List(ctx, folder, cur, 100)
		if err != nil || len(page.Items) == 0 {
			b.Fatal(page, err)
		}
		cur = page.NextCursor
		if key, _, _ := decodeListCursor(cur); keyOnly && cur != "" {
			cur = cursor.Encode(key)
		}
	}
}
