package auth

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"os"
	"strings"
	"sync"
)

// DefaultKeyScopes are the scopes of a key line that names none: what
// every key could do before keys had scopes.
var DefaultKeyScopes = []string{ScopeRead, ScopeWrite}

// Keys is a set of API keys, stored as SHA-256 digests. It is safe for
// concurrent use; [Keys.Replace] swaps in a reloaded set.
//
// A keys file has one key per line: "<hex SHA-256 of the key> [PRINCIPAL]
// [scopes=read,write,admin] [quota=SIZE] [quota-objects=N]" (see
// [Quota]). The principal defaults to "key-" and the
// digest's first 8 hex digits, the scopes to read,write. Blank lines and
// '#' comments are ignored.
type Keys struct {
	mu   sync.RWMutex
	keys []apiKey
}

type apiKey struct {
	digest [sha256.Size]byte
	id     Identity
}

// LoadKeys reads the keys file at path (none when path is "") and the
// extra lines.
func LoadKeys(path string, extra []string) (*Keys, error) {
	ks := &Keys{}
	if err := ks.add("API key", extra); err != nil {
		return nil, err
	}
	if path != "" {
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("auth: read API keys: %w", err)
		}
		if err := ks.add(path+" line", strings.Split(string(b), "\n")); err != nil {
			return nil, err
		}
	}
	return ks, nil
}

// add parses lines, skipping blank ones and comments; an error names the
// line as source and its 1-based number among lines.
func (ks *Keys) add(source string, lines []string) error {
	for i, line := range lines {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, err := parseKeyLine(line)
		if err != nil {
			return fmt.Errorf("auth: %s %d: %w", source, i+1, err)
		}
		ks.keys = append(ks.keys, k)
	}
	return nil
}

func parseKeyLine(line string) (apiKey, error) {
	fields := strings.Fields(line)
	raw, err := hex.DecodeString(strings.ToLower(fields[0]))
	if err != nil || len(raw) != sha256.Size {
		return apiKey{}, fmt.Errorf("want a hex SHA-256 digest first")
	}
	k := apiKey{id: Identity{Scopes: DefaultKeyScopes, Method: "key"}}
	copy(k.digest[:], raw)
	for _, f := range fields[1:] {
		if ok, err := parseQuotaField(&k.id.Quota, f, "quota", "quota-objects"); ok || err != nil {
			if err != nil {
				return apiKey{}, err
			}
			continue
		}
		if list, ok := strings.CutPrefix(f, "scopes="); ok {
			if k.id.Scopes, err = ParseKeyScopes(list); err != nil {
				return apiKey{}, err
			}
			continue
		}
		if k.id.Principal != "" {
			return apiKey{}, fmt.Errorf("unexpected %q after the principal", f)
		}
		k.id.Principal = f
	}
	if k.id.Principal == "" {
		k.id.Principal = "key-" + strings.ToLower(fields[0][:8])
	}
	return k, nil
}

// Len is the number of keys.
func (ks *Keys) Len() int {
	if ks == nil {
		return 0
	}
	ks.mu.RLock()
	defer ks.mu.RUnlock()
	return len(ks.keys)
}

// Lookup returns the identity of the API key secret, comparing digests in
// constant time against every key.
func (ks *Keys) Lookup(secret string) (Identity, bool) {
	return ks.lookupDigest(sha256.Sum256([]byte(secret)))
}

func (ks *Keys) lookupDigest(d [sha256.Size]byte) (Identity, bool) {
	if ks == nil {
		return Identity{}, false
	}
	ks.mu.RLock()
	defer ks.mu.RUnlock()
	var found Identity
	ok := false
	for _, k := range ks.keys {
		if subtle.ConstantTimeCompare(d[:], k.digest[:]) == 1 {
			found, ok = k.id, true
		}
	}
	return found, ok
}

// Replace makes ks the keys of next (a freshly loaded set, not used
// afterwards): a key next lacks is refused from now on.
func (ks *Keys) Replace(next *Keys) {
	next.mu.RLock()
	keys := next.keys
	next.mu.RUnlock()
	ks.mu.Lock()
	ks.keys = keys
	ks.mu.Unlock()
}

// KeyLine returns the keys file line for the API key secret.
func KeyLine(secret, principal string, scopes []string) string {
	d := sha256.Sum256([]byte(secret))
	line := hex.EncodeToString(d[:])
	if principal != "" {
		line += " " + principal
	}
	if len(scopes) > 0 {
		line += " scopes=" + ShortScopes(scopes)
	}
	return line
}
