package wire

import (
	"mime"
	"strings"
)

// mediaTypes are the media types an MCP answer comes in, which MediaType
// reads without mime.ParseMediaType (a map and a string per call, on every
// relayed answer, several times).
var mediaTypes = [...]string{"application/json", "text/event-stream"}

// MediaType is mime.ParseMediaType's media type of contentType ("" when
// it does not read): at once for one of mediaTypes with no parameters, in
// any ASCII case, between spaces.
func MediaType(contentType string) string {
	v := strings.TrimSpace(contentType)
	for _, t := range mediaTypes {
		if asciiEqualFold(v, t) {
			return t
		}
	}
	mt, _, _ := mime.ParseMediaType(contentType)
	return mt
}

// asciiEqualFold reports whether s is lower (ASCII, lower case) in any
// ASCII case; no other folding (strings.EqualFold's ſ for s is not
// strings.ToLower's).
func asciiEqualFold(s, lower string) bool {
	if len(s) != len(lower) {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}
