package token

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
)

// Keys text format, used by key files and the MCPBLOB_TOKEN_KEYS_DATA
// environment variable: one key per line, "<id> <base64url secret>" (no
// padding); the last line is the newest key and signs, every line verifies.
// Blank lines and '#' comments are ignored.

// ParseKeys reads keys in the keys text format.
func ParseKeys(raw []byte) ([]Key, error) {
	var keys []Key
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		id, secret, ok := strings.Cut(line, " ")
		if !ok {
			return nil, fmt.Errorf("token: keys line %d: want \"<id> <base64url secret>\"", n)
		}
		b, err := base64.RawURLEncoding.DecodeString(strings.TrimSpace(secret))
		if err != nil {
			return nil, fmt.Errorf("token: keys line %d: secret is not base64url: %w", n, err)
		}
		keys = append(keys, Key{ID: id, Secret: b})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("token: keys: %w", err)
	}
	if len(keys) == 0 {
		return nil, errors.New("token: keys: no keys")
	}
	return keys, nil
}

// FormatKey returns k as one line of the keys text format (with a newline).
func FormatKey(k Key) string {
	return k.ID + " " + base64.RawURLEncoding.EncodeToString(k.Secret) + "\n"
}
