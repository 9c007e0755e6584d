package namespace_test

import (
	"encoding/base64"
	"errors"
	"io"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpblob/mcpblob/storage"
	"github.com/mcpblob/mcpblob/storage/namespace"
)

// stores are the backends the isolation tests run on, each a fresh store.
var stores = []struct {
	name string
	open func(t *testing.T) storage.Backend
}{
	{"localfs", newLocal},
	{"s3", func(t *testing.T) storage.Backend { return newS3(t) }},
}

// eachStore runs fn on a fresh store of every kind, closed when fn ends.
func eachStore(t *testing.T, fn func(t *testing.T, store storage.Backend)) {
	for _, s := range stores {
		t.Run(s.name, func(t *testing.T) {
			t.Parallel()
			store := s.open(t)
			t.Cleanup(func() { store.Close() })
			fn(t, store)
		})
	}
}

func mustPut(t *testing.T, b storage.Backend, key, data string) storage.Info {
	t.Helper()
	w, err := b.Create(t.Context(), key, storage.CreateOptions{})
	if err != nil {
		t.Fatalf("Create(%q): %v", key, err)
	}
	defer w.Abort(t.Context())
	if _, err := io.WriteString(w, data); err != nil {
		t.Fatalf("Write(%q): %v", key, err)
	}
	info, err := w.Commit(t.Context())
	if err != nil {
		t.Fatalf("Commit(%q): %v", key, err)
	}
	return info
}

func listAll(t *testing.T, b storage.Backend, prefix string) []string {
	t.Helper()
	var keys []string
	cur := ""
	for range 1000 {
		page, err := b.List(t.Context(), prefix, cur, 2)
		if err != nil {
			t.Fatalf("List(%q): %v", prefix, err)
		}
		for _, info := range page.Items {
			keys = append(keys, info.Key)
		}
		if cur = page.NextCursor; cur == "" {
			return keys
		}
	}
	t.Fatalf("List(%q) never ends", prefix)
	return nil
}

// noRawPrefix fails when err's text shows a namespace folder.
func noRawPrefix(t *testing.T, op string, err error) {
	t.Helper()
	if err != nil && strings.Contains(err.Error(), namespace.Prefix) {
		t.Errorf("%s: error %q shows the raw prefix", op, err)
	}
}

// sameAsMissing checks that err, for key, is ErrNotFound and reads exactly
// like want, the error for the truly missing key missing.
func sameAsMissing(t *testing.T, op, key string, err, want error) {
	t.Helper()
	if !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("%s(%q): %v, want ErrNotFound", op, key, err)
		return
	}
	noRawPrefix(t, op, err)
	if got := strings.ReplaceAll(err.Error(), key, "missing"); got != want.Error() {
		t.Errorf("%s(%q): error %q differs from a missing key's %q", op, key, err, want)
	}
}

func TestIsolation(t *testing.T) {
	eachStore(t, func(t *testing.T, store storage.Backend) {
		ctx := t.Context()
		alice, bob := namespace.View(store, "alice"), namespace.View(store, "bob")
		mustPut(t, alice, "secret", "alice's")
		mustPut(t, alice, "dir/x", "alice's")
		mustPut(t, alice, "a", "alice's")

		_, missing := bob.Stat(ctx, "missing")
		_, err := bob.Stat(ctx, "secret")
		sameAsMissing(t, "Stat", "secret", err, missing)
		_, _, missing = bob.Open(ctx, "missing", nil)
		_, _, err = bob.Open(ctx, "secret", nil)
		sameAsMissing(t, "Open", "secret", err, missing)
		missing = bob.Delete(ctx, "missing")
		sameAsMissing(t, "Delete", "secret", bob.Delete(ctx, "secret"), missing)
		if keys := listAll(t, bob, ""); len(keys) != 0 {
			t.Errorf("bob lists %q", keys)
		}

		// Bob's keys are his own: no conflict with alice's, no path conflict.
		for _, key := range []string{"secret", "a/b", "dir"} {
			w, err := bob.Create(ctx, key, storage.CreateOptions{IfNotExists: true})
			if err != nil {
				t.Fatalf("bob Create(%q): %v", key, err)
			}
			io.WriteString(w, "bob's")
			if _, err := w.Commit(ctx); err != nil {
				t.Errorf("bob Commit(%q): %v", key, err)
			}
		}
		if got, want := listAll(t, bob, ""), []string{"a/b", "dir", "secret"}; !slices.Equal(got, want) {
			t.Errorf("bob lists %q, want %q", got, want)
		}
		if got, want := listAll(t, alice, ""), []string{"a", "dir/x", "secret"}; !slices.Equal(got, want) {
			t.Errorf("alice lists %q, want %q", got, want)
		}
		rc, info, err := alice.Open(ctx, "secret", nil)
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(rc)
		rc.Close()
		if string(data) != "alice's" || info.Key != "secret" {
			t.Errorf("alice reads %q as %q, want her own object", data, info.Key)
		}
	})
}

func TestPathConflictInNamespace(t *testing.T) {
	eachStore(t, func(t *testing.T, store storage.Backend) {
		alice := namespace.View(store, "alice")
		mustPut(t, alice, "a", "x")
		mustPut(t, alice, "x/y", "x")
		for _, c := range []struct{ key, conflict string }{{"a/b", "a"}, {"x", "x/"}} {
			_, err := alice.Create(t.Context(), c.key, storage.CreateOptions{})
			var pe *storage.PathConflictError
			if !errors.As(err, &pe) || pe.Key != c.key || pe.Conflict != c.conflict {
				t.Errorf("Create(%q): %v (%+v), want a conflict with %q", c.key, err, pe, c.conflict)
			}
			noRawPrefix(t, "Create", err)
		}
	})
}

// TestBlockedNamespace: a shared-root object in the way of a whole
// namespace is reported without naming it.
func TestBlockedNamespace(t *testing.T) {
	eachStore(t, func(t *testing.T, store storage.Backend) {
		mustPut(t, store, namespace.Prefix+"carol", "root object")
		_, err := namespace.View(store, "carol").Create(t.Context(), "k", storage.CreateOptions{})
		var pe *storage.PathConflictError
		if !errors.Is(err, storage.ErrPathConflict) || errors.As(err, &pe) {
			t.Errorf("Create in a blocked namespace: %v, want a bare ErrPathConflict", err)
		}
		noRawPrefix(t, "Create", err)
		if err != nil && strings.Contains(err.Error(), "carol") {
			t.Errorf("error %q names the folder", err)
		}
	})
}

func TestCraftedCursors(t *testing.T) {
	eachStore(t, func(t *testing.T, store storage.Backend) {
		ctx := t.Context()
		alice, bob := namespace.View(store, "alice"), namespace.View(store, "bob")
		for _, k := range []string{"a1", "a2", "a3"} {
			mustPut(t, alice, k, k)
		}
		mustPut(t, store, "root", "root")
		mustPut(t, store, "zzz", "root")
		mustPut(t, bob, "b1", "b1")
		alicePage, err := alice.List(ctx, "", "", 1)
		if err != nil || alicePage.NextCursor == "" {
			t.Fatalf("alice List: %+v, %v", alicePage, err)
		}
		enc := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
		cursors := []string{
			alicePage.NextCursor, enc(".ns/alice/a1"), enc(".ns/alice/"), enc(".ns/"), enc(".ns"),
			enc(""), enc("a"), enc("root"), enc(".ns/bob/../alice/a1"), enc("../"), enc("../alice/a1"),
			enc(".ns/bob/b1"), enc(".ns/bob/b0"), enc("\x00"), "garbage!", "Li4v", "%2e%2e",
		}
		for _, c := range cursors {
			page, err := bob.List(ctx, "", c, 0)
			noRawPrefix(t, "List", err)
			if err != nil {
				if !errors.Is(err, storage.ErrInvalidCursor) {
					t.Errorf("List(cursor %q): %v, want a page or ErrInvalidCursor", c, err)
				}
				continue
			}
			for _, info := range page.Items {
				if info.Key != "b1" {
					t.Errorf("List(cursor %q) shows %q", c, info.Key)
				}
			}
		}
	})
}

// TestErrorsSpeakCallerKeys: no error of a view shows the raw prefix, and
// key errors name the caller's key.
func TestErrorsSpeakCallerKeys(t *testing.T) {
	eachStore(t, func(t *testing.T, store storage.Backend) {
		ctx := t.Context()
		v := namespace.View(store, "dave")
		mustPut(t, v, "obj", "12345")
		var errs []error
		add := func(err error) { errs = append(errs, err) }
		_, err := v.Stat(ctx, "nope/x")
		add(err)
		_, _, err = v.Open(ctx, "obj", &storage.Range{Offset: 100, Length: 1})
		if !errors.Is(err, storage.ErrInvalidRange) {
			t.Errorf("Open past the end: %v, want ErrInvalidRange", err)
		}
		add(err)
		add(v.Delete(ctx, "nope"))
		_, err = v.List(ctx, "x", "!!", 0)
		add(err)
		w, err := v.Create(ctx, "obj", storage.CreateOptions{IfNotExists: true})
		if err == nil {
			io.WriteString(w, "x")
			_, err = w.Commit(ctx)
			if !errors.Is(err, storage.ErrExists) {
				t.Errorf("IfNotExists Commit: %v, want ErrExists", err)
			}
			add(err)
			add(w.Abort(ctx))
			_, err = w.Write([]byte("x"))
			add(err)
		}
		add(err)
		w, err = v.Create(ctx, "big", storage.CreateOptions{MaxSize: 2, Size: 1})
		if err != nil {
			t.Fatal(err)
		}
		_, err = w.Write([]byte("xyz"))
		if !errors.Is(err, storage.ErrTooLarge) {
			t.Errorf("Write past MaxSize: %v, want ErrTooLarge", err)
		}
		add(err)
		w.Abort(ctx)
		for i, err := range errs {
			if err == nil {
				t.Errorf("error %d is nil", i)
			}
			noRawPrefix(t, "op", err)
		}
	})
}

func TestKeyLimit(t *testing.T) {
	store := newLocal(t)
	defer store.Close()
	for _, p := range []string{"alice", strings.Repeat("p", 128), "needs hashing"} {
		v := namespace.View(store, p)
		limit := storage.MaxKeyLen - len(namespace.Join(namespace.Name(p), ""))
		fits := longKey(limit)
		mustPut(t, v, fits, "x")
		if info, err := v.Stat(t.Context(), fits); err != nil || info.Key != fits {
			t.Errorf("Stat of a %d-byte key: %q, %v", limit, info.Key, err)
		}
		over := longKey(limit + 1)
		_, err := v.Create(t.Context(), over, storage.CreateOptions{})
		var ke *storage.KeyError
		switch {
		case !errors.As(err, &ke) || !errors.Is(err, storage.ErrInvalidKey):
			t.Errorf("Create of a %d-byte key: %v, want a *storage.KeyError", limit+1, err)
		case ke.Key != over || !strings.Contains(ke.Reason, "namespace") || !strings.Contains(ke.Reason, strconv.Itoa(limit)):
			t.Errorf("Create of a %d-byte key: %+v, want the caller's key and the limit %d", limit+1, ke, limit)
		}
		noRawPrefix(t, "Create", err)
	}
}

// longKey returns a valid key of n bytes: segments of 200 'k's.
func longKey(n int) string {
	b := []byte(strings.Repeat("k", n))
	for i := 200; i < n-1; i += 201 {
		b[i] = '/'
	}
	return string(b)
}

func TestInvalidKeysNamedAsGiven(t *testing.T) {
	v := namespace.View(newLocal(t), "alice")
	for _, key := range []string{"..", "/x", "a//b", ".mcpblob/x", ""} {
		_, err := v.Stat(t.Context(), key)
		var ke *storage.KeyError
		if !errors.As(err, &ke) || ke.Key != key {
			t.Errorf("Stat(%q): %v, want a *storage.KeyError for the caller's key", key, err)
		}
		noRawPrefix(t, "Stat", err)
	}
}

// TestUnaddressable: objects the shared root wrote into a namespace's
// folder under keys the view cannot address are not listed.
func TestUnaddressable(t *testing.T) {
	eachStore(t, func(t *testing.T, store storage.Backend) {
		raw := namespace.Join("alice", "")
		mustPut(t, store, raw+".mcpblob/x", "hidden")
		mustPut(t, store, raw+".MCPBLOB/y", "hidden")
		mustPut(t, store, raw+"ok", "visible")
		alice := namespace.View(store, "alice")
		// Not ".": MinIO refuses a list prefix ending in a "." segment,
		// on the raw store too.
		for _, prefix := range []string{"", ".m", ".mcp", ".mcpblob/", ".MCPBLOB"} {
			keys := listAll(t, alice, prefix)
			if slices.ContainsFunc(keys, func(k string) bool { return k != "ok" }) {
				t.Errorf("List(%q) = %q", prefix, keys)
			}
		}
		// The raw store sees everything, and Split routes it.
		for _, key := range listAll(t, store, namespace.Prefix) {
			name, k, ok := namespace.Split(key)
			if want := k == "ok"; ok != want || (ok && name != "alice") {
				t.Errorf("Split(%q) = %q, %q, %v", key, name, k, ok)
			}
		}
	})
}

func TestCloseIsNoOp(t *testing.T) {
	store := newLocal(t)
	defer store.Close()
	v := namespace.View(store, "alice")
	mustPut(t, v, "k", "v")
	if err := v.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := namespace.View(store, "alice").Stat(t.Context(), "k"); err != nil {
		t.Errorf("Stat after closing a view: %v", err)
	}
}

func TestOptionalInterfaces(t *testing.T) {
	local := newLocal(t)
	defer local.Close()
	if _, ok := local.(storage.Claimer); !ok {
		t.Fatal("localfs is no Claimer: test premise broken")
	}
	lv := namespace.View(local, "alice")
	if _, ok := lv.(storage.Presigner); ok {
		t.Error("a view of localfs is a Presigner")
	}
	if _, ok := lv.(storage.Claimer); ok {
		t.Error("a view of localfs is a Claimer")
	}
	remote := newS3(t)
	sv := namespace.View(remote, "alice")
	if _, ok := sv.(storage.Claimer); ok {
		t.Error("a view of s3 is a Claimer")
	}
	p, ok := sv.(storage.Presigner)
	if !ok {
		t.Fatal("a view of s3 is no Presigner")
	}
	u, err := p.PresignGet(t.Context(), "doc.pdf", time.Minute, storage.PresignOptions{})
	if err != nil || !strings.HasSuffix(u.Path, "/.ns/alice/doc.pdf") {
		t.Errorf("PresignGet = %v, %v; want the raw key's URL", u, err)
	}
	u, err = p.PresignPut(t.Context(), "doc.pdf", time.Minute, storage.PresignOptions{})
	if err != nil || !strings.HasSuffix(u.Path, "/.ns/alice/doc.pdf") {
		t.Errorf("PresignPut = %v, %v; want the raw key's URL", u, err)
	}
	_, err = p.PresignGet(t.Context(), "../x", time.Minute, storage.PresignOptions{})
	var ke *storage.KeyError
	if !errors.As(err, &ke) || ke.Key != "../x" {
		t.Errorf("PresignGet(../x): %v, want a KeyError for the caller's key", err)
	}
	_, err = p.PresignPut(t.Context(), "doc.pdf", time.Hour*24*365, storage.PresignOptions{})
	if err == nil {
		t.Error("PresignPut with a year's lifetime succeeded")
	}
	noRawPrefix(t, "PresignPut", err)
}

// TestViewIsCheap: a view costs a couple of small allocations, no more.
func TestViewIsCheap(t *testing.T) {
	store := newLocal(t)
	defer store.Close()
	for _, p := range []string{"alice", "needs hashing"} {
		if n := testing.AllocsPerRun(100, func() { namespace.View(store, p) }); n > 3 {
			t.Errorf("View(%q) makes %v allocations", p, n)
		}
	}
}
