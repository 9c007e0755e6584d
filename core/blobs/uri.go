package blobs

import (
	"path"
	"strings"
	"unicode/utf8"

	"github.com/mcpblob/mcpblob/storage"
)

// URIPrefix starts every blob resource URI; the template is blob:///{+key}.
const URIPrefix = "blob:///"

// URITemplate is the RFC 6570 template of blob resources.
const URITemplate = "blob:///{+key}"

// URI returns the resource URI of key: RFC 6570 reserved expansion, so '/'
// and the other reserved characters stay, everything else outside the
// unreserved set is percent-encoded as UTF-8.
func URI(key string) string {
	var b strings.Builder
	b.Grow(len(URIPrefix) + len(key))
	b.WriteString(URIPrefix)
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

// ParseURI returns the key a blob URI names.
func ParseURI(uri string) (string, bool) {
	rest, ok := strings.CutPrefix(uri, URIPrefix)
	if !ok || rest == "" || strings.ContainsAny(rest, "?#") {
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

// DownloadName is the filename a download of info offers: its Filename,
// else the key's last segment.
func DownloadName(info storage.Info) string {
	if info.Filename != "" {
		return info.Filename
	}
	return path.Base(info.Key)
}

// ContentDisposition formats an RFC 6266 Content-Disposition value with an
// ASCII filename fallback and the exact UTF-8 name as filename* (RFC 8187).
// disposition is "attachment" or "inline".
func ContentDisposition(disposition, name string) string {
	if name == "" {
		return disposition
	}
	var ascii strings.Builder
	for _, r := range name {
		switch {
		case r < 0x20 || r == 0x7f:
		case r >= 0x80:
			ascii.WriteByte('_')
		case r == '"' || r == '\\':
			ascii.WriteByte('\\')
			ascii.WriteRune(r)
		default:
			ascii.WriteRune(r)
		}
	}
	return disposition + `; filename="` + ascii.String() + `"; filename*=UTF-8''` + rfc8187(name)
}

// rfc8187 percent-encodes everything outside attr-char.
func rfc8187(s string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if isAttrChar(c) {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&15])
	}
	return b.String()
}

func isAttrChar(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return strings.IndexByte("!#$&+-.^_`|~", c) >= 0
}
