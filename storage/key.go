package storage

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// MaxKeyLen is the longest key in bytes, the S3 limit.
const MaxKeyLen = 1024

// ReservedDir is the top-level key segment that backends keep for their own
// bookkeeping (temporary uploads, metadata). No key may be ReservedDir or
// start with ReservedDir + "/".
const ReservedDir = ".mcpblob"

// ValidateKey enforces the key rules shared by every backend: a non-empty,
// valid UTF-8 path of at most MaxKeyLen bytes, with no leading or trailing
// '/', no empty, "." or ".." segment, no backslash, no control characters
// (NUL included), and not under ReservedDir in any letter case. The returned error wraps
// ErrInvalidKey and says why.
func ValidateKey(key string) error {
	why := keyProblem(key)
	if why == "" {
		return nil
	}
	return fmt.Errorf("%w %q: %s", ErrInvalidKey, truncateKey(key), why)
}

func keyProblem(key string) string {
	switch {
	case key == "":
		return "empty"
	case len(key) > MaxKeyLen:
		return fmt.Sprintf("longer than %d bytes", MaxKeyLen)
	case !utf8.ValidString(key):
		return "not valid UTF-8"
	case key[0] == '/':
		return "starts with '/'"
	case key[len(key)-1] == '/':
		return "ends with '/'"
	}
	for _, r := range key {
		switch {
		case r < 0x20 || r == 0x7f:
			return fmt.Sprintf("contains control character %U", r)
		case r == '\\':
			return "contains '\\\\'"
		}
	}
	for seg := range strings.SplitSeq(key, "/") {
		switch seg {
		case "":
			return "contains an empty segment ('//')"
		case ".", "..":
			return fmt.Sprintf("contains a %q segment", seg)
		}
	}
	// Case-folded too: on a case-insensitive file system (or a copy of the
	// store on one) ".MCPBLOB" would reach the bookkeeping.
	if first, _, _ := strings.Cut(key, "/"); strings.EqualFold(first, ReservedDir) {
		return fmt.Sprintf("uses the reserved name %q", ReservedDir)
	}
	return ""
}

// truncateKey keeps error messages short for over-long keys.
func truncateKey(key string) string {
	const max = 64
	if len(key) <= max {
		return key
	}
	return key[:max] + "…"
}
