package blobs

import (
	"net/url"
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
	return percentEncode(URIPrefix, key, func(c byte) bool { return isUnreserved(c) || isReserved(c) })
}

// percentEncode returns prefix and then s with every byte keep refuses as
// %XX, in one allocation when nothing needs escaping.
func percentEncode(prefix, s string, keep func(byte) bool) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	b.Grow(len(prefix) + len(s))
	b.WriteString(prefix)
	for i := 0; i < len(s); i++ {
		c := s[i]
		if keep(c) {
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
	key, err := url.PathUnescape(rest)
	if err != nil || !utf8.ValidString(key) {
		return "", false
	}
	return key, true
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
func rfc8187(s string) string { return percentEncode("", s, isAttrChar) }

func isAttrChar(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return strings.IndexByte("!#$&+-.^_`|~", c) >= 0
}
