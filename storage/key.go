package storage

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxKeyLen is the longest key in bytes, the S3 limit.
const MaxKeyLen = 1024

// MaxSegmentLen is the longest key segment (the text between two '/') in
// bytes: the file name limit of the common file systems, so that every key
// valid on one backend is valid on every other.
const MaxSegmentLen = 255

// MaxFilenameLen is the longest original filename in bytes that an object
// may carry (CreateOptions.Filename) and a link may name.
const MaxFilenameLen = 255

// ReservedDir is the top-level key segment that backends keep for their own
// bookkeeping (temporary uploads, metadata). No key may be ReservedDir or
// start with ReservedDir + "/".
const ReservedDir = ".mcpblob"

// KeyError is a key that a store refuses: one that breaks ValidateKey's
// rules, or one a backend cannot hold (a local store's file system limits
// the length of each path segment). It wraps ErrInvalidKey and, when set,
// Err. Reason is safe to show to clients; Err (a syscall error, say) is for
// logs only and is not part of Error().
type KeyError struct {
	Key    string // the refused key, possibly long
	Reason string // why, as a phrase: "contains a \"..\" segment"
	Err    error  // the underlying cause, or nil
}

func (e *KeyError) Error() string {
	if e.Key == "" {
		return "storage: invalid key: " + e.Reason
	}
	return fmt.Sprintf("storage: invalid key %q: %s", TruncateKey(e.Key), e.Reason)
}

// Unwrap returns ErrInvalidKey and the cause.
func (e *KeyError) Unwrap() []error {
	if e.Err == nil {
		return []error{ErrInvalidKey}
	}
	return []error{ErrInvalidKey, e.Err}
}

// KeyReason returns why err refuses a key, as a phrase to show a client:
// the Reason of a [*KeyError] in err's chain, else "" (an ErrInvalidKey
// without one says nothing more than "invalid key").
func KeyReason(err error) string {
	var ke *KeyError
	if errors.As(err, &ke) {
		return ke.Reason
	}
	return ""
}

// ValidateKey enforces the key rules shared by every backend: a non-empty,
// valid UTF-8 path of at most MaxKeyLen bytes, with no leading or trailing
// '/', no empty, "." or ".." segment, no segment over MaxSegmentLen bytes,
// no backslash, no control characters (NUL included), and not under
// ReservedDir in any letter case. The returned error is a [*KeyError]
// (wrapping ErrInvalidKey) that says why.
func ValidateKey(key string) error {
	why := keyProblem(key)
	if why == "" {
		return nil
	}
	return &KeyError{Key: key, Reason: why}
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
		switch {
		case seg == "":
			return "contains an empty segment ('//')"
		case seg == "." || seg == "..":
			return fmt.Sprintf("contains a %q segment", seg)
		case len(seg) > MaxSegmentLen:
			return fmt.Sprintf("has a segment longer than %d bytes", MaxSegmentLen)
		}
	}
	// Case-folded too: on a case-insensitive file system (or a copy of the
	// store on one) ".MCPBLOB" would reach the bookkeeping.
	if first, _, _ := strings.Cut(key, "/"); strings.EqualFold(first, ReservedDir) {
		return fmt.Sprintf("uses the reserved name %q", ReservedDir)
	}
	return ""
}

// TruncateKey shortens key for a message: at most 64 bytes, then "…" (the
// cut may split a UTF-8 sequence; quote the result).
func TruncateKey(key string) string {
	const max = 64
	if len(key) <= max {
		return key
	}
	return key[:max] + "…"
}

// FilenameError is the error of an unusable filename: why it breaks the
// filename rules. It wraps ErrInvalidFilename.
type FilenameError struct {
	Reason string // "longer than 255 bytes", "contains control character U+000D"…
}

func (e *FilenameError) Error() string { return fmt.Sprintf("%v: %s", ErrInvalidFilename, e.Reason) }

// Unwrap returns ErrInvalidFilename.
func (e *FilenameError) Unwrap() error { return ErrInvalidFilename }

// ValidateFilename enforces the rules of an original filename (Info.Filename,
// a download link's filename): at most MaxFilenameLen bytes of valid UTF-8
// without control characters (C0 including CR, LF and NUL, DEL, C1), so it
// fits in a response header and cannot split one or a log line. "" (no
// filename) is valid. The returned error is a *FilenameError.
func ValidateFilename(name string) error {
	var why string
	switch {
	case len(name) > MaxFilenameLen:
		why = fmt.Sprintf("longer than %d bytes", MaxFilenameLen)
	case !utf8.ValidString(name):
		why = "not valid UTF-8"
	default:
		if i := strings.IndexFunc(name, unicode.IsControl); i >= 0 {
			r, _ := utf8.DecodeRuneInString(name[i:])
			why = fmt.Sprintf("contains control character %U", r)
		}
	}
	if why == "" {
		return nil
	}
	return &FilenameError{Reason: why}
}

// PathConflictError reports a key that cannot exist beside another one,
// because keys are paths: an object "a" and objects "a/…" exclude each other
// (a local store maps keys to files and folders; every backend keeps the
// same rule). It wraps ErrPathConflict.
type PathConflictError struct {
	Key string
	// Conflict names what is in the way: an existing object that is a
	// parent of Key ("a" for the key "a/b"), or Key + "/" when objects
	// exist under Key ("x/" for the key "x").
	Conflict string
}

func (e *PathConflictError) Error() string {
	if strings.HasSuffix(e.Conflict, "/") {
		return fmt.Sprintf("%v: %q: objects exist under %q", ErrPathConflict, TruncateKey(e.Key), TruncateKey(e.Conflict))
	}
	return fmt.Sprintf("%v: %q: the object %q is a parent of it", ErrPathConflict, TruncateKey(e.Key), TruncateKey(e.Conflict))
}

// Unwrap returns ErrPathConflict.
func (e *PathConflictError) Unwrap() error { return ErrPathConflict }

// Parents returns the parent paths of key, shortest first: "a", "a/b" for
// "a/b/c".
func Parents(key string) []string {
	var out []string
	for i := 0; i < len(key); i++ {
		if key[i] == '/' {
			out = append(out, key[:i])
		}
	}
	return out
}
