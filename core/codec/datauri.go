package codec

import (
	"errors"
	"io"
	"strconv"
	"strings"
)

// MaxDataURIHeader is the longest data URI header, the text between "data:"
// and the ',' separator, that [ParseDataURI] and [NewDataURIReader] accept.
const MaxDataURIHeader = 1024

// Default media type and parameter of a data URI that names none (RFC 2397).
const (
	defaultMediaType = "text/plain"
	defaultCharset   = "US-ASCII"
)

// ErrNotDataURI is wrapped by the [DataURIError] for a value that does not
// start with the "data:" scheme, so callers can tell a wrong scheme from a
// malformed data URI with errors.Is.
var ErrNotDataURI = errors.New("codec: not a data URI")

// DataURIError reports a malformed data URI. Its message names what is
// wrong and where, and never contains any of the payload.
type DataURIError struct {
	// Reason says what is wrong, for example `missing ',' separator` or
	// `bad base64 at byte 12`.
	Reason string
	// Err is the underlying error, if any: [ErrNotDataURI], an
	// encoding/base64.CorruptInputError (its offset counts payload bytes
	// after the ',', CR and LF excluded) or io.ErrUnexpectedEOF.
	Err error
}

func (e *DataURIError) Error() string { return "codec: data URI: " + e.Reason }

// Unwrap returns e.Err.
func (e *DataURIError) Unwrap() error { return e.Err }

// Param is one media type parameter of a data URI.
type Param struct {
	Name  string // lower-case
	Value string // percent-escapes decoded
}

// DataURIHeader is the part of an RFC 2397 data URI before the ',':
// "data:" [ type "/" subtype ] *( ";" name "=" value ) [ ";base64" ].
type DataURIHeader struct {
	// MediaType is "type/subtype" in lower case. When the URI names no
	// media type it is "text/plain" (RFC 2397).
	MediaType string
	// Params are the media type parameters in the order written. When the
	// URI names neither a media type nor parameters, Params is
	// [{charset US-ASCII}] (RFC 2397).
	Params []Param
	// Base64 reports a ";base64" payload; otherwise the payload is
	// percent-encoded.
	Base64 bool
}

// Param returns the value of the first parameter called name
// (case-insensitive) and whether there is one.
func (h *DataURIHeader) Param(name string) (string, bool) {
	for _, p := range h.Params {
		if strings.EqualFold(p.Name, name) {
			return p.Value, true
		}
	}
	return "", false
}

// String formats the header as it appears between "data:" and ',', with
// parameter values percent-escaped where needed, for example
// "text/plain;charset=utf-8" or "image/png;base64".
func (h DataURIHeader) String() string {
	var b strings.Builder
	b.WriteString(h.MediaType)
	for _, p := range h.Params {
		b.WriteByte(';')
		b.WriteString(escapeToken(p.Name))
		b.WriteByte('=')
		b.WriteString(escapeToken(p.Value))
	}
	if h.Base64 {
		b.WriteString(";base64")
	}
	return b.String()
}

// DataURI is a decoded RFC 2397 data URI.
type DataURI struct {
	DataURIHeader
	Data []byte // the decoded payload
}

// String returns the redacted form "data:<header>,[N bytes]" (N = len(Data)):
// printing a DataURI never prints its payload.
func (d DataURI) String() string {
	return "data:" + d.DataURIHeader.String() + ",[" + strconv.Itoa(len(d.Data)) + " bytes]"
}

// GoString is [DataURI.String], so that %#v redacts too.
func (d DataURI) GoString() string { return d.String() }

// ParseDataURI parses and decodes an RFC 2397 data URI.
//
//   - The scheme and the ";base64" marker are case-insensitive; the media
//     type and parameter names are lower-cased. An omitted media type means
//     "text/plain;charset=US-ASCII" ("data:,x"); "data:;charset=utf-8,x" is
//     "text/plain;charset=utf-8".
//   - A base64 payload is standard base64 (RFC 4648 section 4) with padding;
//     CR and LF are ignored, as by [StdEncoding]. Percent-escapes are not
//     decoded inside a base64 payload: a '%' there is reported as bad base64.
//     (Clients produce unescaped base64, and accepting escapes would make
//     error offsets ambiguous; RFC 2397 permits but does not require them.)
//   - Any other payload is percent-decoded ("%41" is 'A'); other bytes are
//     taken as they are, and '+' is not a space.
//
// Errors are [*DataURIError]s (wrapping [ErrNotDataURI] for another
// scheme) whose messages never contain the payload. ParseDataURI decodes
// exactly as [NewDataURIReader] does, in 64 KiB steps, so a large s is not
// copied whole.
func ParseDataURI(s string) (DataURI, error) {
	r, err := newDataURIReader(strings.NewReader(s), len(s))
	if err != nil {
		return DataURI{}, err
	}
	payload := len(s) - r.start
	if r.Header.Base64 {
		payload = StdEncoding.DecodedLen(payload)
	}
	data := make([]byte, payload)
	n := 0
	for {
		m, err := r.Read(data[n:])
		n += m
		if err == io.EOF {
			break
		}
		if err != nil {
			return DataURI{}, err
		}
		if n == len(data) {
			var one [1]byte
			if m, err := r.Read(one[:]); m != 0 || err != io.EOF {
				if err == nil || err == io.EOF {
					panic("bug: codec: data URI payload longer than its bound")
				}
				return DataURI{}, err
			}
			break
		}
	}
	return DataURI{DataURIHeader: r.Header, Data: data[:n:n]}, nil
}

// FormatDataURI returns "data:<mediaType>;base64,<base64 of data>".
// mediaType is written as given ("type/subtype" with optional ";name=value"
// parameters, as [DataURIHeader.String] formats them); an empty mediaType
// means "application/octet-stream", as SEP-2356 requires for unknown types.
func FormatDataURI(mediaType string, data []byte) string {
	if mediaType == "" {
		mediaType = "application/octet-stream"
	}
	var b strings.Builder
	b.Grow(len("data:") + len(mediaType) + len(";base64,") + StdEncoding.EncodedLen(len(data)))
	b.WriteString("data:")
	b.WriteString(mediaType)
	b.WriteString(";base64,")
	// Encode through a small buffer so the result is built in one allocation.
	var buf [4096]byte
	for len(data) > 0 {
		n := min(len(data), len(buf)/4*3)
		StdEncoding.Encode(buf[:], data[:n])
		b.Write(buf[:StdEncoding.EncodedLen(n)])
		data = data[n:]
	}
	return b.String()
}

// RedactDataURI returns a form of s safe for logs and error messages: for a
// data URI it keeps the scheme and the media type and replaces the payload
// by its approximate decoded size, "data:image/png;base64,[N bytes]" (exact
// for a well-formed payload). A value that is not a data URI is returned
// unchanged, so apply it only where a data URI is expected.
func RedactDataURI(s string) string {
	if len(s) < 5 || !strings.EqualFold(s[:5], "data:") {
		return s
	}
	comma := strings.IndexByte(s[:min(len(s), 5+MaxDataURIHeader+1)], ',')
	if comma < 0 {
		return "data:[" + strconv.Itoa(len(s)-5) + " bytes]"
	}
	payload := s[comma+1:]
	h, err := parseDataURIHeader(s[5:comma])
	if err != nil {
		return "data:[invalid header]," + "[" + strconv.Itoa(len(payload)) + " bytes]"
	}
	var n int
	if h.Base64 {
		n = len(payload) - strings.Count(payload, "\n") - strings.Count(payload, "\r")
		pad := 0
		for i := len(payload) - 1; i >= 0 && pad < 2; i-- {
			if c := payload[i]; c == '=' {
				pad++
			} else if c != '\r' && c != '\n' {
				break
			}
		}
		n = n/4*3 - pad
		if n < 0 {
			n = 0
		}
	} else {
		n = len(payload) - 2*strings.Count(payload, "%")
	}
	return "data:" + h.String() + ",[" + strconv.Itoa(max(n, 0)) + " bytes]"
}

// parseDataURIHeader parses the text between "data:" and ','.
func parseDataURIHeader(s string) (DataURIHeader, error) {
	var h DataURIHeader
	mt, rest, _ := strings.Cut(s, ";")
	if mt == "" {
		h.MediaType = defaultMediaType
	} else {
		typ, sub, ok := strings.Cut(mt, "/")
		if !ok || !isToken(typ) || !isToken(sub) {
			return h, &DataURIError{Reason: "invalid media type " + quoteShort(mt)}
		}
		h.MediaType = strings.ToLower(mt)
	}
	for rest != "" {
		var p string
		p, rest, _ = strings.Cut(rest, ";")
		name, value, ok := strings.Cut(p, "=")
		if !ok {
			if rest == "" && strings.EqualFold(p, "base64") {
				h.Base64 = true
				break
			}
			return h, &DataURIError{Reason: "invalid parameter " + quoteShort(p)}
		}
		// RFC 2397: attribute and value are RFC 2045 tokens, "represented
		// using URL escaped encoding of urlc as necessary" — both sides.
		n, nok := unescapeParam(name)
		v, vok := unescapeParam(value)
		if !nok || !vok {
			return h, &DataURIError{Reason: "invalid parameter " + quoteShort(p)}
		}
		h.Params = append(h.Params, Param{Name: strings.ToLower(n), Value: v})
	}
	if mt == "" && len(h.Params) == 0 {
		h.Params = []Param{{Name: "charset", Value: defaultCharset}}
	}
	return h, nil
}

// isToken reports whether s is a non-empty RFC 2045 token.
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isTokenChar(s[i]) {
			return false
		}
	}
	return true
}

func isTokenChar(c byte) bool {
	return c > ' ' && c < 0x7F && !strings.ContainsRune(`()<>@,;:\"/[]?=`, rune(c))
}

// unescapeParam decodes the percent-escapes of a parameter value, which must
// otherwise consist of token characters.
func unescapeParam(s string) (string, bool) {
	if !strings.Contains(s, "%") {
		return s, s != "" && isToken(s)
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '%':
			if i+2 >= len(s) || unhex(s[i+1]) > 15 || unhex(s[i+2]) > 15 {
				return "", false
			}
			b = append(b, unhex(s[i+1])<<4|unhex(s[i+2]))
			i += 2
		case isTokenChar(c):
			b = append(b, c)
		default:
			return "", false
		}
	}
	return string(b), true
}

// escapeToken percent-escapes the bytes of s that are not token characters
// (and '%'), so that a formatted header parses back to the same values.
func escapeToken(s string) string {
	ok := true
	for i := 0; i < len(s); i++ {
		ok = ok && isTokenChar(s[i]) && s[i] != '%'
	}
	if ok {
		return s
	}
	const hexdig = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if c := s[i]; isTokenChar(c) && c != '%' {
			b.WriteByte(c)
		} else {
			b.WriteByte('%')
			b.WriteByte(hexdig[c>>4])
			b.WriteByte(hexdig[c&15])
		}
	}
	return b.String()
}

// unhex returns the value of a hex digit, or 0xFF.
func unhex(c byte) byte {
	switch {
	case '0' <= c && c <= '9':
		return c - '0'
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10
	}
	return 0xFF
}

// quoteShort quotes s for an error message, cut to 64 bytes.
func quoteShort(s string) string {
	if len(s) > 64 {
		return strconv.Quote(s[:64]) + "…"
	}
	return strconv.Quote(s)
}

// MatchAccept reports whether mediaType satisfies an SEP-2356 x-mcp-file
// accept list. Only type/subtype are compared, case-insensitively, with
// parameters stripped from both sides; "image/*" matches every image
// subtype and "*/*" everything. Dot-extension entries (".pdf") are picker
// hints that a server cannot check, so they are ignored; an accept list that
// is empty, nil or holds only such entries matches every media type.
func MatchAccept(accept []string, mediaType string) bool {
	typ, sub, ok := splitMediaType(mediaType)
	checked := false
	for _, a := range accept {
		a = strings.TrimSpace(a)
		if strings.HasPrefix(a, ".") {
			continue
		}
		checked = true
		at, as, aok := splitMediaType(a)
		if !aok || !ok && at != "*" {
			continue
		}
		if at == "*" && as == "*" ||
			strings.EqualFold(at, typ) && (as == "*" || strings.EqualFold(as, sub)) {
			return true
		}
	}
	return !checked
}

// splitMediaType splits "type/subtype; params" into trimmed type and subtype.
func splitMediaType(s string) (typ, sub string, ok bool) {
	s, _, _ = strings.Cut(s, ";")
	typ, sub, ok = strings.Cut(strings.TrimSpace(s), "/")
	typ, sub = strings.TrimSpace(typ), strings.TrimSpace(sub)
	return typ, sub, ok && typ != "" && sub != ""
}
