package files

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Scheme is the URI scheme of file objects.
const Scheme = "mcp-file"

// DigestAlgorithm is the one digest algorithm supported (SEP-2631 makes it
// mandatory).
const DigestAlgorithm = "sha-256"

// maxIDLen bounds a file id in a URI.
const maxIDLen = 64

// maxServerLen bounds the server part of a URI.
const maxServerLen = 253

// State is where a file is in its life.
type State string

// The states of a file. A single-shot upload goes from prepared to
// uploaded (its bytes arrived and matched the pins) or failed; the fork's
// files/completeUpload moves an uploaded file to completed. An uploaded or
// completed file can be used.
const (
	Prepared  State = "prepared"
	Uploading State = "uploading"
	Uploaded  State = "uploaded"
	Completed State = "completed"
	Failed    State = "failed"
)

// Usable reports whether a file in state s has its bytes.
func (s State) Usable() bool { return s == Uploaded || s == Completed }

// File is one file object, as its record keeps it.
type File struct {
	ID        string `json:"id"`
	Owner     string `json:"owner"`
	Name      string `json:"name,omitempty"`
	MediaType string `json:"mediaType,omitempty"`
	// Size is the size the client declared; -1 when it declared none.
	Size int64 `json:"size"`
	// Digest is the sha-256 the client pinned, lower-case hex; "" none.
	Digest string `json:"digest,omitempty"`
	// MaxSize bounds the bytes the upload may bring.
	MaxSize int64 `json:"maxSize"`
	// Key is the store key (raw, with any namespace) of its bytes.
	Key string `json:"key"`
	// UploadID is the nonce of its upload link.
	UploadID string `json:"uploadId"`
	// IdempotencyKey is the fork's idempotencyKey it was prepared with.
	IdempotencyKey string `json:"idem,omitempty"`
	State          State  `json:"state"`
	// Reason is why a failed file failed (a data.reason).
	Reason string `json:"reason,omitempty"`
	// Stored describes the bytes once they arrived.
	Stored  *Stored   `json:"stored,omitempty"`
	Created time.Time `json:"created"`
	// Expires is when the record of a file without its bytes (prepared,
	// uploading, failed) is swept: its upload link's expiry. Usable files
	// do not expire.
	Expires time.Time `json:"expires,omitzero"`
	// TusID is the id of the tus upload started on its upload link, if
	// any.
	TusID string `json:"tus,omitempty"`
	// Expired marks a record being swept: it reads as missing.
	Expired bool `json:"expired,omitempty"`
	// Rev counts writes, so every write's bytes differ.
	Rev int64 `json:"rev"`

	version string
}

// Stored is what the store says of a file's bytes.
type Stored struct {
	Size      int64  `json:"size"`
	SHA256    string `json:"sha256"` // lower-case hex
	ETag      string `json:"etag"`
	MediaType string `json:"mediaType"`
}

// NewID returns a fresh file id: 26 characters of [A-Z2-7].
func NewID() string { return rand.Text() }

// URI is the mcp-file URI of file id on server.
func URI(server, id string) string { return Scheme + "://" + server + "/" + id }

// ErrBadURI is the error of a string that is no mcp-file URI.
var ErrBadURI = errors.New("files: not an mcp-file URI")

// IsURI reports whether s claims the mcp-file scheme (case-insensitive),
// well formed or not.
func IsURI(s string) bool {
	return len(s) > len(Scheme)+1 && strings.EqualFold(s[:len(Scheme)+1], Scheme+":")
}

// ParseURI splits an mcp-file URI into its server and file id. The form
// is exact: "mcp-file://", a server of letters, digits, '.', '-', ':'
// (a port) and '[' ']' (an IPv6 literal), "/", and an id of
// [A-Za-z0-9_-]; no query, fragment, userinfo or percent-encoding.
// Errors wrap ErrBadURI and say what is wrong.
func ParseURI(s string) (server, id string, err error) {
	rest, ok := strings.CutPrefix(s, Scheme+"://")
	if !ok {
		return "", "", fmt.Errorf("%w: it must start with %q", ErrBadURI, Scheme+"://")
	}
	server, id, ok = strings.Cut(rest, "/")
	switch {
	case !ok:
		return "", "", fmt.Errorf("%w: no file id after the server", ErrBadURI)
	case server == "" || len(server) > maxServerLen || !allIn(server, serverByte):
		return "", "", fmt.Errorf("%w: malformed server", ErrBadURI)
	case id == "" || len(id) > maxIDLen || !allIn(id, idByte):
		return "", "", fmt.Errorf("%w: malformed file id", ErrBadURI)
	}
	return server, id, nil
}

func allIn(s string, ok func(c byte) bool) bool {
	for i := range len(s) {
		if !ok(s[i]) {
			return false
		}
	}
	return true
}

func idByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_'
}

func serverByte(c byte) bool {
	return idByte(c) && c != '_' || c == '.' || c == ':' || c == '[' || c == ']'
}

// Digest is a digest as the wire carries it: {algorithm, value}, the value
// unpadded base64url.
type Digest struct {
	Algorithm string `json:"algorithm"`
	Value     string `json:"value"`
}

// DigestError is a digest the client sent that cannot be used; Reason is
// its data.reason.
type DigestError struct {
	Reason string
	Msg    string
}

func (e *DigestError) Error() string { return "files: " + e.Msg }

// ParseDigest checks a wire digest and returns its lower-case hex.
func ParseDigest(d Digest) (string, error) {
	if !strings.EqualFold(d.Algorithm, DigestAlgorithm) {
		return "", &DigestError{Reason: "unsupportedDigestAlgorithm",
			Msg: fmt.Sprintf("digest algorithm %q is not supported (only %q)", d.Algorithm, DigestAlgorithm)}
	}
	b, err := base64.RawURLEncoding.Strict().DecodeString(d.Value)
	if err != nil || len(b) != 32 {
		return "", &DigestError{Reason: "invalidDigest",
			Msg: "digest value must be the 32-byte sha-256 in unpadded base64url (43 characters)"}
	}
	return hex.EncodeToString(b), nil
}

// WireDigest is the wire form of a sha-256 in lower-case hex; zero for "".
func WireDigest(hexSum string) *Digest {
	b, err := hex.DecodeString(hexSum)
	if err != nil || len(b) != 32 {
		return nil
	}
	return &Digest{Algorithm: DigestAlgorithm, Value: base64.RawURLEncoding.EncodeToString(b)}
}

// Check compares the bytes the store holds for f with what was pinned: the
// declared size, the digest, maxSize. It returns "" when they match, else
// the data.reason ("maxSizeExceeded", "sizeMismatch", "digestMismatch").
func (f *File) Check(st Stored) string {
	switch {
	case f.MaxSize > 0 && st.Size > f.MaxSize:
		return "maxSizeExceeded"
	case f.Size >= 0 && st.Size != f.Size:
		return "sizeMismatch"
	case f.Digest != "" && st.SHA256 != f.Digest:
		return "digestMismatch"
	}
	return ""
}
