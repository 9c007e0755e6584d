package ingest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcpblob/mcpblob/storage"
	"github.com/mcpblob/mcpblob/storage/localfs"
	"github.com/mcpblob/mcpblob/storage/s3"
	"github.com/mcpblob/mcpblob/storage/storagetest"
	"github.com/mcpblob/mcpblob/storage/storagetest/s3test"
)

func TestMain(m *testing.M) { s3test.Main(m) }

// backend is a store under test and a check that an upload left nothing
// behind (staged files, for the local store).
type backend struct {
	name string
	new  func(t *testing.T) (storage.Backend, func(t *testing.T))
}

var buckets atomic.Int64

func backends() []backend {
	return []backend{
		{"localfs", func(t *testing.T) (storage.Backend, func(t *testing.T)) {
			dir := t.TempDir()
			be, err := localfs.Open(dir, localfs.Options{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { be.Close() })
			return be, func(t *testing.T) {
				t.Helper()
				ents, err := os.ReadDir(filepath.Join(dir, storage.ReservedDir, "tmp"))
				if err != nil && !errors.Is(err, os.ErrNotExist) {
					t.Fatal(err)
				}
				for _, e := range ents {
					t.Errorf("staged file left behind: %s", e.Name())
				}
			}
		}},
		{"s3", func(t *testing.T) (storage.Backend, func(t *testing.T)) {
			srv := s3test.Shared(t)
			be, err := s3.Open(t.Context(), s3.Options{Endpoint: "http://" + srv.Endpoint,
				AccessKey: srv.AccessKey, SecretKey: srv.SecretKey, PartSize: 5 << 20, CreateBucket: true,
				Bucket: "ingest-" + strconv.FormatInt(int64(os.Getpid()), 36) + "-" + strconv.FormatInt(buckets.Add(1), 10)})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { be.Close() })
			return be, func(*testing.T) {}
		}},
	}
}

// nothingVisible fails t when key exists or anything is listed.
func nothingVisible(t *testing.T, be storage.Backend, key string) {
	t.Helper()
	if _, err := be.Stat(context.Background(), key); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("Stat %q after a failed upload: %v, want ErrNotFound", key, err)
	}
	page, err := be.List(context.Background(), "", "", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range page.Items {
		t.Errorf("listed after a failed upload: %q (%d bytes)", it.Key, it.Size)
	}
}

// onlyReader hides a reader's WriterTo, so io.Copy takes Upload.ReadFrom.
type onlyReader struct{ io.Reader }

// pieces writes data to w in writes of varying sizes (Upload.Write).
func pieces(w io.Writer, data []byte) error {
	for i := 0; len(data) > 0; i++ {
		k := min(len(data), []int{1, 7, 4096, 300 << 10, 1 << 20, 3<<20 + 1}[i%6])
		if _, err := w.Write(data[:k]); err != nil {
			return err
		}
		data = data[k:]
	}
	return nil
}

func sum(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

var png = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")

func TestStore(t *testing.T) {
	data := storagetest.Bytes(7, 0, 3<<20+17) // crosses chunk boundaries
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			be, leftovers := b.new(t)
			ctx := t.Context()
			info, err := Store(ctx, be, Spec{Key: "a/b.bin", Filename: "b.bin", MaxSize: int64(len(data))}, onlyReader{bytes.NewReader(data)})
			if err != nil {
				t.Fatal(err)
			}
			if info.Key != "a/b.bin" || info.Size != int64(len(data)) || info.SHA256 != sum(data) ||
				info.MediaType != storage.DefaultMediaType || info.Filename != "b.bin" {
				t.Fatalf("Info %+v", info)
			}
			rc, got, err := be.Open(ctx, "a/b.bin", nil)
			if err != nil {
				t.Fatal(err)
			}
			stored, _ := io.ReadAll(rc)
			rc.Close()
			if !bytes.Equal(stored, data) || got.SHA256 != sum(data) {
				t.Fatal("stored bytes differ")
			}

			// The Write path, with an exact Size and a charset kept.
			u, err := Begin(ctx, be, Spec{Key: "t.txt", MediaType: "text/plain; charset=utf-8", Size: int64(len(data))})
			if err != nil {
				t.Fatal(err)
			}
			defer u.Abort()
			text := bytes.Repeat([]byte("text "), len(data)/5)
			text = append(text, data[:len(data)-len(text)]...)
			if err := pieces(u, text); err != nil {
				t.Fatal(err)
			}
			if err := u.Close(); err != nil {
				t.Fatal(err)
			}
			if u.Written() != int64(len(text)) || !bytes.Equal(u.Head(), text[:SniffLen]) || u.MediaType() != "text/plain; charset=utf-8" {
				t.Fatalf("Written %d, head %q, type %q", u.Written(), u.Head()[:10], u.MediaType())
			}
			info, err = u.Commit(ctx)
			if err != nil || info.SHA256 != sum(text) || info.MediaType != "text/plain; charset=utf-8" {
				t.Fatalf("Commit: %+v %v", info, err)
			}
			u.Abort() // no-op after Commit
			if _, err := be.Stat(ctx, "t.txt"); err != nil {
				t.Fatalf("Abort after Commit removed the object: %v", err)
			}
			if _, err := u.Commit(ctx); !errors.Is(err, storage.ErrClosed) {
				t.Fatalf("second Commit: %v", err)
			}
			if _, err := u.Write([]byte("x")); !errors.Is(err, storage.ErrClosed) {
				t.Fatalf("Write after Commit: %v", err)
			}

			// A small upload (no chunk filled, no writer goroutine), and an
			// empty one where allowed.
			info, err = Store(ctx, be, Spec{Key: "small", MediaType: "application/json"}, strings.NewReader(`{"a":1}`))
			if err != nil || info.Size != 7 || info.MediaType != "application/json" {
				t.Fatalf("small: %+v %v", info, err)
			}
			if info, err := Store(ctx, be, Spec{Key: "empty", AllowEmpty: true}, strings.NewReader("")); err != nil || info.Size != 0 {
				t.Fatalf("AllowEmpty: %+v %v", info, err)
			}
			// NoSniff stores a type the content contradicts, as declared.
			if info, err := Store(ctx, be, Spec{Key: "lie.png", MediaType: "image/png", NoSniff: true}, strings.NewReader("not a png")); err != nil || info.MediaType != "image/png" {
				t.Fatalf("NoSniff: %+v %v", info, err)
			}
			leftovers(t)
		})
	}
}

// TestSniffedType: octet-stream content with a reliable magic number is
// reported as its sniffed type (the object keeps the type Begin stored);
// accept lists pass through extensions that the content does not
// contradict.
func TestSniffedType(t *testing.T) {
	be, _ := backends()[0].new(t)
	ctx := t.Context()
	u, err := Begin(ctx, be, Spec{Key: "p", Accept: []string{"image/*", "application/octet-stream"}})
	if err != nil {
		t.Fatal(err)
	}
	defer u.Abort()
	u.Write(png)
	if err := u.Close(); err != nil || u.MediaType() != "image/png" {
		t.Fatalf("Close %v, MediaType %q", err, u.MediaType())
	}
	if info, err := u.Commit(ctx); err != nil || info.MediaType != storage.DefaultMediaType {
		t.Fatalf("Commit %+v %v", info, err)
	}
	accept := []string{"image/png", ".pdf", ".docx"}
	for _, tc := range []struct {
		filename, content string
		ok                bool
	}{
		{"report.PDF", "%PDF-1.7 tiny", true},
		{"report.pdf", "PK\x03\x04zip", false}, // a ZIP is not a PDF
		{"letter.docx", "PK\x03\x04zip", true}, // a .docx is a ZIP
		{"report.pdf", "plain words", true},    // nothing sniffed
		{"pic.bin", "%PDF-1.7", false},         // .bin is not listed
	} {
		_, err := Store(ctx, be, Spec{Key: "x/" + tc.filename, Filename: tc.filename, Accept: accept}, strings.NewReader(tc.content))
		if (err == nil) != tc.ok || err != nil && !errors.Is(err, ErrNotAccepted) {
			t.Errorf("%s with %q: %v, want ok=%v", tc.filename, tc.content, err, tc.ok)
		}
	}
}

// TestRefused runs every error path against each backend and checks the
// error, its Detail, and that nothing is visible afterwards.
func TestRefused(t *testing.T) {
	big := storagetest.Bytes(3, 0, 4<<20)
	const maxSize = 3<<20 + 5
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			for _, tc := range []struct {
				name   string
				spec   Spec
				src    []byte
				want   error
				detail string // "" when the error is not an *Error
			}{
				{"too large", Spec{MaxSize: maxSize}, big, ErrTooLarge, "file is larger than maxSize 3145733 bytes"},
				{"empty", Spec{}, nil, ErrEmpty, "file is empty"},
				{"type mismatch", Spec{MediaType: "image/png"}, []byte("hello"), ErrTypeMismatch,
					`content does not match the declared media type "image/png"`},
				{"type lie", Spec{MediaType: "text/plain; charset=utf-8"}, []byte("%PDF-1.7"), ErrTypeMismatch,
					`content is application/pdf, not the declared media type "text/plain"`},
				{"declared not accepted", Spec{MediaType: "text/plain", Accept: []string{"image/*", ".pdf"}}, []byte("hi"), ErrNotAccepted,
					`media type "text/plain" is not accepted (accept: image/*, .pdf)`},
				{"sniffed not accepted", Spec{MediaType: "application/x-thing", Accept: []string{"application/*"}}, png, ErrNotAccepted,
					`media type "image/png" is not accepted (accept: application/*)`},
				{"size short", Spec{Size: 10}, []byte("12345"), storage.ErrSizeMismatch, ""},
				{"size long", Spec{Size: 10}, []byte("123456789012"), storage.ErrSizeMismatch, ""},
				{"size above max", Spec{Size: 10, MaxSize: 5}, []byte("1234567890"), storage.ErrTooLarge, ""},
			} {
				t.Run(tc.name, func(t *testing.T) {
					be, leftovers := b.new(t)
					tc.spec.Key = "k/" + tc.name
					for _, path := range []string{"ReadFrom", "Write"} {
						var err error
						if path == "ReadFrom" {
							_, err = Store(t.Context(), be, tc.spec, onlyReader{bytes.NewReader(tc.src)})
						} else {
							err = writeAll(t.Context(), be, tc.spec, tc.src)
						}
						checkErr(t, err, tc.want, tc.detail)
						nothingVisible(t, be, tc.spec.Key)
					}
					leftovers(t)
				})
			}

			t.Run("too large mid-stream", func(t *testing.T) {
				be, leftovers := b.new(t)
				u, err := Begin(t.Context(), be, Spec{Key: "mid", MaxSize: maxSize})
				if err != nil {
					t.Fatal(err)
				}
				var werr error
				writes := 0
				for off := 0; off < len(big) && werr == nil; off += 1 << 20 {
					_, werr = u.Write(big[off : off+1<<20])
					writes++
				}
				checkErr(t, werr, ErrTooLarge, "file is larger than maxSize 3145733 bytes")
				if writes != 4 || u.Written() != 3<<20 {
					t.Fatalf("failed on write %d after %d bytes, want 4 and %d", writes, u.Written(), 3<<20)
				}
				checkErr(t, u.Close(), ErrTooLarge, "file is larger than maxSize 3145733 bytes")
				if _, err := u.Commit(t.Context()); !errors.Is(err, ErrTooLarge) {
					t.Fatalf("Commit after a failed Close: %v", err)
				}
				u.Abort()
				u.Abort()
				nothingVisible(t, be, "mid")
				leftovers(t)
			})

			t.Run("exists", func(t *testing.T) {
				be, leftovers := b.new(t)
				if _, err := Store(t.Context(), be, Spec{Key: "e"}, strings.NewReader("first")); err != nil {
					t.Fatal(err)
				}
				_, err := Store(t.Context(), be, Spec{Key: "e", IfNotExists: true}, bytes.NewReader(big))
				checkErr(t, err, storage.ErrExists, "")
				info, err := be.Stat(t.Context(), "e")
				if err != nil || info.Size != 5 {
					t.Fatalf("the existing object changed: %+v %v", info, err)
				}
				leftovers(t)
			})

			t.Run("invalid key", func(t *testing.T) {
				be, leftovers := b.new(t)
				for _, key := range []string{"../x", "", "a//b", storage.ReservedDir + "/x"} {
					_, err := Store(t.Context(), be, Spec{Key: key}, strings.NewReader("x"))
					checkErr(t, err, storage.ErrInvalidKey, "")
				}
				nothingVisible(t, be, "x")
				leftovers(t)
			})

			t.Run("source fails", func(t *testing.T) {
				be, leftovers := b.new(t)
				boom := errors.New("boom")
				src := io.MultiReader(bytes.NewReader(big), iotestErr{boom})
				if _, err := Store(t.Context(), be, Spec{Key: "src"}, onlyReader{src}); !errors.Is(err, boom) {
					t.Fatalf("Store: %v, want the source's error", err)
				}
				nothingVisible(t, be, "src")
				leftovers(t)
			})

			t.Run("context cancelled", func(t *testing.T) {
				be, leftovers := b.new(t)
				ctx, cancel := context.WithCancel(t.Context())
				u, err := Begin(ctx, be, Spec{Key: "c"})
				if err != nil {
					t.Fatal(err)
				}
				u.Write(big[:2<<20])
				cancel()
				u.Write(big[2<<20:])
				// Storage notices in a Write or at the latest in Commit.
				err = u.Close()
				if err == nil {
					_, err = u.Commit(ctx)
				}
				if !errors.Is(err, context.Canceled) {
					t.Fatalf("Close or Commit after cancel: %v", err)
				}
				u.Abort()
				nothingVisible(t, be, "c")
				leftovers(t)
			})
		})
	}
}

type iotestErr struct{ err error }

func (r iotestErr) Read([]byte) (int, error) { return 0, r.err }

// writeAll is Store through Upload.Write.
func writeAll(ctx context.Context, be storage.Backend, spec Spec, src []byte) error {
	u, err := Begin(ctx, be, spec)
	if err != nil {
		return err
	}
	defer u.Abort()
	if err := pieces(u, src); err != nil {
		return err
	}
	if err := u.Close(); err != nil {
		return err
	}
	_, err = u.Commit(ctx)
	return err
}

func checkErr(t *testing.T, err, want error, detail string) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Fatalf("error %v, want %v", err, want)
	}
	if !strings.HasPrefix(err.Error(), "ingest: ") {
		t.Errorf("error %q lacks the package prefix", err)
	}
	var ie *Error
	switch {
	case detail == "" && errors.As(err, &ie):
		t.Errorf("error %v is an *Error (%q), want a storage error", err, ie.Detail)
	case detail != "" && !errors.As(err, &ie):
		t.Errorf("error %v is not an *Error", err)
	case detail != "" && ie.Detail != detail:
		t.Errorf("Detail %q, want %q", ie.Detail, detail)
	}
}
