package tus

import (
	"encoding/base64"
	"errors"
	"strings"
	"unicode/utf8"
)

// Header parsers of client bytes. Each refuses anything the protocol does
// not allow, with an error phrase fit for the client.

// maxMetadataHeader bounds Upload-Metadata, raw.
const maxMetadataHeader = 8 << 10

// maxMetadataPairs bounds the pairs of Upload-Metadata.
const maxMetadataPairs = 64

// maxDigits bounds the digits of Upload-Offset and Upload-Length (int64).
const maxDigits = 18

// ParseSize parses Upload-Offset or Upload-Length: a non-negative decimal
// integer of at most 18 digits, nothing else (no sign, no space).
func ParseSize(s string) (int64, bool) {
	if s == "" || len(s) > maxDigits {
		return 0, false
	}
	var n int64
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}

// ParseMetadata parses Upload-Metadata: comma-separated pairs of a key and
// an optional base64 (standard, padded) value, separated by one space.
// Keys are unique, non-empty ASCII without spaces or commas; values
// decode to UTF-8 without control characters.
func ParseMetadata(h string) (map[string]string, error) {
	if h == "" {
		return map[string]string{}, nil
	}
	if len(h) > maxMetadataHeader {
		return nil, errors.New("Upload-Metadata is over 8 KiB")
	}
	pairs := strings.Split(h, ",")
	if len(pairs) > maxMetadataPairs {
		return nil, errors.New("Upload-Metadata has more than 64 pairs")
	}
	md := make(map[string]string, len(pairs))
	for _, p := range pairs {
		k, v, err := metadataPair(strings.TrimLeft(p, " "))
		if err != nil {
			return nil, err
		}
		if _, dup := md[k]; dup {
			return nil, errors.New("Upload-Metadata names the key " + quoteKey(k) + " twice")
		}
		md[k] = v
	}
	return md, nil
}

func metadataPair(p string) (string, string, error) {
	k, enc, hasValue := strings.Cut(p, " ")
	if !metadataKey(k) {
		return "", "", errors.New("Upload-Metadata has an empty or malformed key (ASCII, no spaces or commas)")
	}
	if !hasValue {
		return k, "", nil
	}
	b, err := base64.StdEncoding.Strict().DecodeString(enc)
	if err != nil {
		return "", "", errors.New("Upload-Metadata value of " + quoteKey(k) + " is not base64")
	}
	if !utf8.Valid(b) || strings.ContainsFunc(string(b), func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return "", "", errors.New("Upload-Metadata value of " + quoteKey(k) + " is not text without control characters")
	}
	return k, string(b), nil
}

func metadataKey(k string) bool {
	if k == "" || len(k) > 128 {
		return false
	}
	for i := 0; i < len(k); i++ {
		if c := k[i]; c <= ' ' || c >= 0x7f || c == ',' {
			return false
		}
	}
	return true
}

func quoteKey(k string) string { return `"` + k + `"` }

// Checksum is a parsed Upload-Checksum: the algorithm and the digest.
type Checksum struct {
	Algorithm string
	Digest    []byte
}

// Algorithms are the checksum algorithms served, as Tus-Checksum-Algorithm
// lists them.
var Algorithms = []string{"sha1", "sha256", "crc32c"}

var digestLen = map[string]int{"sha1": 20, "sha256": 32, "crc32c": 4}

// ParseChecksum parses Upload-Checksum: "<algorithm> <base64 digest>".
// unsupported reports a well-formed header naming an algorithm not served
// (400 as the protocol says); err any other malformation.
func ParseChecksum(h string) (c Checksum, err error) {
	alg, enc, ok := strings.Cut(h, " ")
	if !ok {
		return c, errors.New("Upload-Checksum must be an algorithm and a base64 digest separated by a space")
	}
	n, known := digestLen[alg]
	if !known {
		return c, errors.New("Upload-Checksum algorithm is not one of " + strings.Join(Algorithms, ", "))
	}
	d, err := base64.StdEncoding.Strict().DecodeString(enc)
	if err != nil || len(d) != n {
		return c, errors.New("Upload-Checksum digest is not the base64 of a " + alg + " digest")
	}
	return Checksum{Algorithm: alg, Digest: d}, nil
}

// maxConcatParts bounds the partial uploads of one final upload.
const maxConcatParts = 256

// ParseConcat parses Upload-Concat: "partial", or "final;" and the partial
// uploads' URLs separated by spaces; it returns the ids (the URLs' last
// path segments, which must follow base).
func ParseConcat(h, base string) (partial bool, ids []string, err error) {
	if h == "partial" {
		return true, nil, nil
	}
	rest, ok := strings.CutPrefix(h, "final;")
	if !ok {
		return false, nil, errors.New(`Upload-Concat must be "partial" or "final;" and URLs`)
	}
	urls := strings.Fields(rest)
	if len(urls) == 0 || len(urls) > maxConcatParts {
		return false, nil, errors.New("Upload-Concat final must name 1 to 256 partial uploads")
	}
	for _, u := range urls {
		id, ok := idOf(u, base)
		if !ok {
			return false, nil, errors.New("Upload-Concat names a URL that is not an upload of this endpoint")
		}
		ids = append(ids, id)
	}
	return false, ids, nil
}

// idOf returns the upload id of a URL or path that ends in base + id.
func idOf(u, base string) (string, bool) {
	i := strings.Index(u, base)
	if i < 0 {
		return "", false
	}
	id := u[i+len(base):]
	return id, ValidID(id)
}

// ValidID reports whether id has the form of an upload id: 26 characters
// of base32 (rand.Text).
func ValidID(id string) bool {
	if len(id) != 26 {
		return false
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; !(c >= 'A' && c <= 'Z' || c >= '2' && c <= '7') {
			return false
		}
	}
	return true
}
