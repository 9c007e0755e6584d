package namespace_test

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/mcpblob/mcpblob/storage"
	"github.com/mcpblob/mcpblob/storage/namespace"
)

func hashOf(p string) string {
	sum := sha256.Sum256([]byte(p))
	return "=" + hex.EncodeToString(sum[:16])
}

func TestName(t *testing.T) {
	long := strings.Repeat("x", 128)
	for _, c := range []struct{ principal, want string }{
		{"alice", "alice"},
		{"alice@example.com", "alice@example.com"},
		{"auth0|1234567890", "auth0|1234567890"},
		{"google-oauth2:1043+x_y.z-Q", "google-oauth2:1043+x_y.z-Q"},
		{"A", "A"},
		{long, long},
		{long + "x", hashOf(long + "x")},
		{".hidden", hashOf(".hidden")},
		{"..", hashOf("..")},
		{"=abc", hashOf("=abc")},
		{hashOf("alice"), hashOf(hashOf("alice"))},
		{"a/b", hashOf("a/b")},
		{"Bob Smith", hashOf("Bob Smith")},
		{"tab\t", hashOf("tab\t")},
		{"ünïcödé", hashOf("ünïcödé")},
		{"a\\b", hashOf("a\\b")},
		{"a=b", hashOf("a=b")},
		{"\x00", hashOf("\x00")},
		{"\xff", hashOf("\xff")},
	} {
		if got := namespace.Name(c.principal); got != c.want {
			t.Errorf("Name(%q) = %q, want %q", c.principal, got, c.want)
		}
	}
}

func TestNameEmptyPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("Name(\"\") did not panic")
		}
	}()
	namespace.Name("")
}

func TestSplit(t *testing.T) {
	h := hashOf("x y")
	for _, c := range []struct {
		raw, name, key string
		ok             bool
	}{
		{".ns/alice/k", "alice", "k", true},
		{".ns/alice/a/b/c", "alice", "a/b/c", true},
		{".ns/" + h + "/k", h, "k", true},
		{".ns/alice", "", "", false},
		{".ns/alice/", "", "", false},
		{".ns//k", "", "", false},
		{".ns/.x/k", "", "", false},
		{".ns/=abc/k", "", "", false},
		{".ns/" + strings.ToUpper(h) + "/k", "", "", false},
		{".ns/alice/.mcpblob/x", "", "", false},
		{".ns/alice/a//b", "", "", false},
		{".nsx/alice/k", "", "", false},
		{"alice/k", "", "", false},
		{"", "", "", false},
	} {
		name, key, ok := namespace.Split(c.raw)
		if name != c.name || key != c.key || ok != c.ok {
			t.Errorf("Split(%q) = %q, %q, %v; want %q, %q, %v", c.raw, name, key, ok, c.name, c.key, c.ok)
		}
	}
}

// validSegment reports whether name is a usable namespace segment: a valid
// key on its own, without '/', not hidden, and short enough to leave room.
func validSegment(name string) bool {
	return storage.ValidateKey(name) == nil && !strings.ContainsRune(name, '/') &&
		name[0] != '.' && len(name) <= 128
}

func FuzzName(f *testing.F) {
	for _, s := range []string{"alice", "a/b", ".x", "=x", strings.Repeat("y", 129), "\xff", "Bob Smith"} {
		f.Add(s, s+"!")
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		if a == "" || b == "" {
			return
		}
		na, nb := namespace.Name(a), namespace.Name(b)
		if !validSegment(na) {
			t.Errorf("Name(%q) = %q, not a valid segment", a, na)
		}
		if namespace.Name(a) != na {
			t.Errorf("Name(%q) is not deterministic", a)
		}
		if (a == b) != (na == nb) {
			t.Errorf("Name(%q) = %q, Name(%q) = %q", a, na, b, nb)
		}
		if _, key, ok := namespace.Split(namespace.Join(na, "k")); !ok || key != "k" {
			t.Errorf("Split(Join(%q, k)) = %q, %v", na, key, ok)
		}
	})
}

// FuzzSplitJoin: Split undoes Join for every name and valid key, and Join
// undoes Split for every raw key Split accepts.
func FuzzSplitJoin(f *testing.F) {
	for _, s := range []string{"alice|k", "x y|a/b", ".ns/alice/k|", "|", "a|..", "=|x", namespace.Join(hashOf("x y"), "k")} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		principal, key, _ := strings.Cut(s, "|")
		if principal != "" && storage.ValidateKey(key) == nil {
			name := namespace.Name(principal)
			raw := namespace.Join(name, key)
			n, k, ok := namespace.Split(raw)
			if !ok || n != name || k != key {
				t.Errorf("Split(Join(%q, %q)) = %q, %q, %v", name, key, n, k, ok)
			}
		}
		if n, k, ok := namespace.Split(s); ok {
			// A readable name is its own principal's; a hashed one is not.
			if namespace.Join(n, k) != s || (n[0] != '=' && namespace.Name(n) != n) {
				t.Errorf("Split(%q) = %q, %q: Join gives %q, Name(%q) = %q", s, n, k, namespace.Join(n, k), n, namespace.Name(n))
			}
		}
	})
}
