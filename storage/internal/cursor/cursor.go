package cursor

import (
	"encoding/base64"

	"github.com/mcpblob/mcpblob/storage"
)

// Encode returns the cursor that resumes a listing after key.
func Encode(key string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(key))
}

// Decode returns the key a cursor resumes after; "" decodes to "" (start of
// the listing). Anything that Encode could not have produced gives
// storage.ErrInvalidCursor.
func Decode(c string) (string, error) {
	if c == "" {
		return "", nil
	}
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil || storage.ValidateKey(string(b)) != nil {
		return "", storage.ErrInvalidCursor
	}
	return string(b), nil
}

// ValidPrefix reports whether some valid key could start with prefix. List
// answers an empty page without asking the store when it could not.
func ValidPrefix(prefix string) bool {
	return prefix == "" || storage.ValidateKey(prefix) == nil || storage.ValidateKey(prefix+"x") == nil
}
