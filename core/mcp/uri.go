package mcp

import (
	"strings"
	"unicode/utf8"
)

// BlobURIPrefix starts every blob resource URI; the template is blob:///{+key}.
const BlobURIPrefix = "blob:///"

// BlobURITemplate is the RFC 6570 template of blob resources.
const BlobURITemplate = "blob:///{+key}"

// BlobURI returns the resource URI of key: RFC 6570 reserved expansion, so
// '/' and the other reserved characters stay, everything else outside the
// unreserved set is percent-encoded as UTF-8.
func BlobURI(key string) string {
	var b strings.Builder
	b.Grow(len(BlobURIPrefix) + len(key))
	b.WriteString(BlobURIPrefix)
	const hex = "0123456789ABCDEF"
	for i := 0; i < len(key); i++ {
		c := key[i]
		if isUnreserved(c) || isReserved(c) {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&15])
	}
	return b.String()
}

// ParseBlobURI returns the key a blob URI names.
func ParseBlobURI(uri string) (string, bool) {
	rest, ok := strings.CutPrefix(uri, BlobURIPrefix)
	if !ok || rest == "" {
		return "", false
	}
	if strings.ContainsAny(rest, "?#") {
		return "", false
	}
	out := make([]byte, 0, len(rest))
	for i := 0; i < len(rest); i++ {
		c := rest[i]
		if c != '%' {
			out = append(out, c)
			continue
		}
		if i+2 >= len(rest) {
			return "", false
		}
		h, ok1 := unhex(rest[i+1])
		l, ok2 := unhex(rest[i+2])
		if !ok1 || !ok2 {
			return "", false
		}
		out = append(out, h<<4|l)
		i += 2
	}
	if !utf8.Valid(out) {
		return "", false
	}
	return string(out), true
}

func isUnreserved(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		c == '-' || c == '.' || c == '_' || c == '~'
}

// isReserved reports RFC 3986 reserved characters except '?' and '#', which
// would end the path; keys containing them are percent-encoded.
func isReserved(c byte) bool {
	return strings.IndexByte(":/[]@!$&'()*+,;=", c) >= 0
}

func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}
