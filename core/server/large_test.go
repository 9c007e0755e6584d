package server

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/mcpblob/mcpblob/storage"
	"github.com/mcpblob/mcpblob/storage/localfs"
)

// TestReadHugeBlob reads a 1 GiB blob through resources/read, once as a JSON
// response (exact Content-Length) and once as SSE, decodes it on the fly and
// checks the bytes, while sampling the process heap: growth must stay under
// 32 MiB. (64 MiB under -race or -short, where 1 GiB takes too long.)
func TestReadHugeBlob(t *testing.T) {
	size := int64(1 << 30)
	if raceEnabled || testing.Short() {
		size = 64 << 20
	}
	const maxGrowth = 32 << 20
	heapTest(t)
	ctx := context.Background()
	st, err := localfs.Open(t.TempDir(), localfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	w, err := st.Create(ctx, "big/blob.bin", storage.CreateOptions{MediaType: "application/octet-stream", Size: size})
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.New()
	src := rand.NewChaCha8([32]byte{1, 2, 3})
	if _, err := io.CopyN(io.MultiWriter(w, h), src, size); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	want := h.Sum(nil)

	c := serveMCP(t, Options{Backend: st}, legacyVersion, `{}`)
	for _, mode := range []string{"json", "sse"} {
		t.Run(mode, func(t *testing.T) {
			accept := "application/json, text/event-stream"
			if mode == "sse" {
				accept = "text/event-stream"
			}
			watch := heapWatch(t)
			start := time.Now()
			ca := c.in(t).with(map[string]string{"Accept": accept})
			resp := ca.open(ca.requestID("7", "resources/read", `{"uri":"blob:///big/blob.bin"}`))
			if resp.StatusCode != 200 {
				t.Fatalf("status %d", resp.StatusCode)
			}
			wantType := map[string]string{"json": "application/json", "sse": "text/event-stream"}[mode]
			if ct := resp.Header.Get("Content-Type"); ct != wantType {
				t.Fatalf("Content-Type %q, want %q", ct, wantType)
			}
			if mode == "json" {
				prefix := `{"jsonrpc":"2.0","id":7,"result":{"contents":[{"uri":"blob:///big/blob.bin","mimeType":"application/octet-stream","blob":"`
				wantLen := int64(len(prefix)) + (size+2)/3*4 + int64(len(`"}]}}`))
				if resp.ContentLength != wantLen {
					t.Fatalf("Content-Length %d, want %d", resp.ContentLength, wantLen)
				}
			}
			got, rest, err := decodeBlobStream(resp.Body)
			if err != nil {
				t.Fatal(err)
			}
			growth := watch()
			if !bytes.Equal(got, want) {
				t.Fatal("decoded blob differs from the stored one")
			}
			wantRest := `"}]}}`
			if mode == "sse" {
				wantRest += "\n\n"
			}
			if rest != wantRest {
				t.Fatalf("trailer %q, want %q", rest, wantRest)
			}
			el := time.Since(start)
			t.Logf("%s: %d MiB in %v (%.0f MB/s raw), heap growth %.1f MiB", mode, size>>20, el.Round(time.Millisecond),
				float64(size)/el.Seconds()/1e6, float64(growth)/(1<<20))
			if growth > maxGrowth {
				t.Fatalf("heap grew by %d bytes, limit %d", growth, maxGrowth)
			}
		})
	}
}

// decodeBlobStream finds the "blob":" member, base64-decodes its value while
// hashing it, and returns the digest and whatever follows the value.
func decodeBlobStream(r io.Reader) ([]byte, string, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	const marker = `"blob":"`
	var head []byte
	for !bytes.HasSuffix(head, []byte(marker)) {
		c, err := br.ReadByte()
		if err != nil {
			return nil, "", fmt.Errorf("no blob member in %q: %w", head, err)
		}
		head = append(head, c)
		if len(head) > 4096 {
			return nil, "", errors.New("blob member not found in the first 4 KiB")
		}
	}
	h := sha256.New()
	if _, err := io.Copy(h, base64.NewDecoder(base64.StdEncoding, &untilQuote{r: br})); err != nil {
		return nil, "", err
	}
	rest, err := io.ReadAll(br)
	if err != nil {
		return nil, "", err
	}
	return h.Sum(nil), `"` + string(rest), nil
}

// untilQuote reads from r up to (not including) the next '"'.
type untilQuote struct {
	r    *bufio.Reader
	done bool
}

func (u *untilQuote) Read(p []byte) (int, error) {
	if u.done {
		return 0, io.EOF
	}
	buf, _ := u.r.Peek(min(len(p), u.r.Buffered()))
	if len(buf) == 0 {
		if _, err := u.r.Peek(1); err != nil {
			return 0, err
		}
		buf, _ = u.r.Peek(min(len(p), u.r.Buffered()))
	}
	if i := bytes.IndexByte(buf, '"'); i >= 0 {
		buf = buf[:i]
		u.done = true
	}
	n := copy(p, buf)
	u.r.Discard(n)
	if u.done {
		u.r.Discard(1)
		return n, nil
	}
	return n, nil
}
