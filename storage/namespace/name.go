package namespace

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"github.com/mcpblob/mcpblob/storage"
)

// Root is the top-level key segment that holds the namespaces.
const Root = ".ns"

// Prefix starts every namespaced raw key.
const Prefix = Root + "/"

// maxReadable bounds a principal used as its own namespace name.
const maxReadable = 128

// hashBytes is how many bytes of the SHA-256 a hashed name keeps.
const hashBytes = 16

// Name returns the namespace segment of principal: the principal itself when
// it is a safe, readable segment (1–128 bytes of [A-Za-z0-9._@+:|-], not
// starting with '.' or '='), else "=" followed by the lower-case hex of the
// first 16 bytes of its SHA-256. The readable form never starts with '=', so
// the two forms cannot meet and distinct principals get distinct names (up
// to a 128-bit hash collision). Name is deterministic and unsalted.
//
// An empty principal is a programming error (no principal is no tenant):
// Name panics.
func Name(principal string) string {
	if principal == "" {
		panic("namespace: empty principal")
	}
	if readable(principal) {
		return principal
	}
	sum := sha256.Sum256([]byte(principal))
	return "=" + hex.EncodeToString(sum[:hashBytes])
}

// readable reports whether s is its own namespace name.
func readable(s string) bool {
	if len(s) == 0 || len(s) > maxReadable || s[0] == '.' || s[0] == '=' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !readableByte(s[i]) {
			return false
		}
	}
	return true
}

func readableByte(b byte) bool {
	switch {
	case b >= 'a' && b <= 'z', b >= 'A' && b <= 'Z', b >= '0' && b <= '9':
		return true
	}
	return strings.IndexByte("._@+:|-", b) >= 0
}

// hashed reports whether s has the form of a hashed name.
func hashed(s string) bool {
	if len(s) != 1+2*hashBytes || s[0] != '=' {
		return false
	}
	for i := 1; i < len(s); i++ {
		if c := s[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// validName reports whether Name can return s.
func validName(s string) bool { return readable(s) || hashed(s) }

// Split reports whether raw is a namespaced key: Prefix, a name that Name
// can return, "/", and a key that storage.ValidateKey accepts. It returns
// the name and the key within the namespace. Other keys (".ns/x" without a
// key, or ".ns/.x/y" whose name Name never makes) are not in any namespace:
// no view can address them; they belong to the shared root.
func Split(raw string) (name, key string, ok bool) {
	rest, found := strings.CutPrefix(raw, Prefix)
	if !found {
		return "", "", false
	}
	name, key, found = strings.Cut(rest, "/")
	if !found || !validName(name) || storage.ValidateKey(key) != nil {
		return "", "", false
	}
	return name, key, true
}

// Join returns the raw key of key in namespace name. It does not check its
// arguments: for a name from Name and a valid key, Split undoes it.
func Join(name, key string) string {
	return Prefix + name + "/" + key
}
