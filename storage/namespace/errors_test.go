package namespace_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"
	"testing"

	"github.com/mcpblob/mcpblob/storage"
	"github.com/mcpblob/mcpblob/storage/namespace"
)

// failing is a Backend whose every operation fails with fail(raw key): it
// produces the error shapes the rewrite rules must handle, including ones
// the real stores produce only on failures hard to provoke (a network error
// quoting the request URL).
type failing struct{ fail func(raw string) error }

func (f failing) Stat(_ context.Context, key string) (storage.Info, error) {
	return storage.Info{}, f.fail(key)
}

func (f failing) Open(_ context.Context, key string, _ *storage.Range) (io.ReadCloser, storage.Info, error) {
	return nil, storage.Info{}, f.fail(key)
}

func (f failing) Create(_ context.Context, key string, _ storage.CreateOptions) (storage.Writer, error) {
	return nil, f.fail(key)
}

func (f failing) Delete(_ context.Context, key string) error { return f.fail(key) }

func (f failing) List(_ context.Context, prefix, _ string, _ int) (storage.Page, error) {
	return storage.Page{}, f.fail(prefix)
}

func (f failing) Close() error { return nil }

// escapeName is how an S3 client writes a name in a URL path.
func escapeName(name string) string { return strings.ReplaceAll(url.PathEscape(name), "=", "%3D") }

func TestErrorRewrites(t *testing.T) {
	long := strings.Repeat("p", 128) // a readable name that truncation would cut
	hashed := namespace.Name("needs hashing")
	cases := []struct {
		name      string
		principal string
		key       string
		fail      func(raw string) error
		check     func(t *testing.T, err error)
	}{
		{"truncated KeyError", long, "k/" + strings.Repeat("x", 50), func(raw string) error {
			return fmt.Errorf("stub: stat %q: %w", raw, &storage.KeyError{Key: raw, Reason: "is too long for the stub"})
		}, wantKeyError("k/" + strings.Repeat("x", 50))},
		{"KeyError without key", "alice", "k", func(raw string) error {
			return fmt.Errorf("stub: stat %q: %w", raw, &storage.KeyError{Reason: "is too long", Err: io.ErrUnexpectedEOF})
		}, func(t *testing.T, err error) {
			wantKeyError("")(t, err)
			if !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Errorf("%v lost the cause", err)
			}
		}},
		{"URL path", hashed, "a b/c", func(raw string) error {
			u := "http://h/bucket/" + namespace.Prefix + escapeName(hashed) + "/a%20b/c"
			return fmt.Errorf("stub: stat %q: %w", raw, &url.Error{Op: "Head", URL: u, Err: context.DeadlineExceeded})
		}, func(t *testing.T, err error) {
			var ue *url.Error
			if !errors.As(err, &ue) || !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("%v lost its chain", err)
			}
			if !strings.Contains(err.Error(), "/bucket/a%20b/c") {
				t.Errorf("%q lost the key", err)
			}
		}},
		{"URL query", "a:b", "x", func(raw string) error {
			return fmt.Errorf("stub: list %q: Get \"http://h/b/?prefix=.ns%%2Fa%%3Ab%%2Fx&start-after=.ns%%2fa%%3Ab%%2fw\": %w", raw, storage.ErrNotFound)
		}, func(t *testing.T, err error) {
			if got := err.Error(); !strings.Contains(got, "prefix=x&start-after=w") {
				t.Errorf("%q: query not rewritten", got)
			}
		}},
		{"caller key with .ns", "alice", "q/.ns/alice/z", func(raw string) error {
			return fmt.Errorf("stub: stat %q: %w", raw, storage.ErrNotFound)
		}, func(t *testing.T, err error) {
			if got, want := err.Error(), `stub: stat "q/.ns/alice/z": `+storage.ErrNotFound.Error(); got != want {
				t.Errorf("error %q, want %q", got, want)
			}
		}},
		{"conflict inside", "alice", "a/b", func(raw string) error {
			return &storage.PathConflictError{Key: raw, Conflict: strings.TrimSuffix(raw, "/b")}
		}, func(t *testing.T, err error) {
			var pe *storage.PathConflictError
			if !errors.As(err, &pe) || pe.Key != "a/b" || pe.Conflict != "a" {
				t.Errorf("%v: %+v, want a conflict of a/b with a", err, pe)
			}
		}},
		{"conflict outside", "alice", "a/b", func(raw string) error {
			return fmt.Errorf("stub: create %q: %w", raw, &storage.PathConflictError{Key: raw, Conflict: namespace.Root})
		}, func(t *testing.T, err error) {
			var pe *storage.PathConflictError
			if !errors.Is(err, storage.ErrPathConflict) || errors.As(err, &pe) {
				t.Errorf("%v: want a bare ErrPathConflict", err)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := namespace.View(failing{c.fail}, c.principal)
			_, err := v.Stat(t.Context(), c.key)
			if err == nil {
				t.Fatal("no error")
			}
			c.check(t, err)
			if strings.Contains(c.key, namespace.Prefix) {
				return // the caller's own ".ns/" stays
			}
			noRawPrefix(t, "Stat", err)
			name := namespace.Name(c.principal)
			for _, trace := range []string{name[:min(8, len(name))], escapeName(name)[:min(8, len(name))]} {
				if strings.Contains(err.Error(), trace) {
					t.Errorf("error %q shows the namespace name", err)
				}
			}
		})
	}
}

// wantKeyError checks for a *storage.KeyError naming key.
func wantKeyError(key string) func(t *testing.T, err error) {
	return func(t *testing.T, err error) {
		t.Helper()
		var ke *storage.KeyError
		if !errors.As(err, &ke) || ke.Key != key || !errors.Is(err, storage.ErrInvalidKey) {
			t.Errorf("%v: %+v, want a KeyError for %q", err, ke, key)
		}
	}
}

// TestUnchangedErrors: an error that names no raw key is returned as is.
func TestUnchangedErrors(t *testing.T) {
	for _, want := range []error{context.Canceled, storage.ErrInvalidCursor, fmt.Errorf("%w: more than 5 bytes", storage.ErrTooLarge)} {
		v := namespace.View(failing{func(string) error { return want }}, "alice")
		if _, err := v.List(t.Context(), "p", "", 0); err != want {
			t.Errorf("List: %v, want %v itself", err, want)
		}
		if err := v.Delete(t.Context(), "k"); err != want {
			t.Errorf("Delete: %v, want %v itself", err, want)
		}
	}
}
