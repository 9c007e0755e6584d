package s3

import (
	"encoding/base64"
	"strings"

	"github.com/mcpblob/mcpblob/storage"
	"github.com/mcpblob/mcpblob/storage/internal/cursor"
)

// maxListToken bounds the service's continuation token a cursor may carry
// (MinIO's are about 100 bytes, AWS's about 150).
const maxListToken = 1024

// maxCursorLen bounds a whole cursor: base64 of a key, a NUL and a token.
const maxCursorLen = (storage.MaxKeyLen + 1 + maxListToken + 2) / 3 * 4

// encodeListCursor returns the cursor that resumes a listing after key;
// token, when not empty, is the service's continuation token that resumes
// it there without a new walk of the bucket. Keys never hold a NUL, which
// separates the two.
func encodeListCursor(key, token string) string {
	if token == "" {
		return cursor.Encode(key)
	}
	return base64.RawURLEncoding.EncodeToString([]byte(key + "\x00" + token))
}

// decodeListCursor returns the key and the continuation token a cursor
// holds. Cursors of the form storage/internal/cursor hands out (a key
// alone, as this package wrote them before) still decode, with no token.
func decodeListCursor(c string) (key, token string, err error) {
	if len(c) > maxCursorLen {
		return "", "", storage.ErrInvalidCursor
	}
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return "", "", storage.ErrInvalidCursor
	}
	key, token, found := strings.Cut(string(b), "\x00")
	if !found {
		key, err = cursor.Decode(c)
		return key, "", err
	}
	if storage.ValidateKey(key) != nil || !validListToken(token) {
		return "", "", storage.ErrInvalidCursor
	}
	return key, token, nil
}

// validListToken accepts the printable ASCII tokens services hand out.
func validListToken(token string) bool {
	if token == "" || len(token) > maxListToken {
		return false
	}
	for i := range len(token) {
		if token[i] < 0x21 || token[i] > 0x7e {
			return false
		}
	}
	return true
}
