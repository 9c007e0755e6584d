package wire

import (
	"encoding/json"
	"unicode/utf8"
)

// The JSON-RPC method of a POST whose era carries no Mcp-Method header
// comes from a bounded look at the body: the top-level members of the
// object that opens it, within the first bytes (the gateway's Options.PeekBytes). Only "method" and "id"
// are read; every other value is skipped without being decoded, so a
// large string costs nothing but the bytes looked at.

// PeekMessage reads the top-level "method" and "id" members of the JSON
// object at the start of b. complete reports that b holds the whole
// object (both members, if present, were seen).
func PeekMessage(b []byte) (method string, id json.RawMessage, complete bool) {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return "", nil, false
	}
	i++
	for {
		i = skipSpace(b, i)
		if i >= len(b) {
			return method, id, false
		}
		if b[i] == '}' {
			return method, id, true
		}
		if b[i] == ',' {
			i = skipSpace(b, i+1)
		}
		kEnd := skipValue(b, i)
		if kEnd < 0 || b[i] != '"' {
			return method, id, false
		}
		key, err := memberName(b[i:kEnd])
		if err != nil {
			return method, id, false
		}
		i = skipSpace(b, kEnd)
		if i >= len(b) || b[i] != ':' {
			return method, id, false
		}
		i = skipSpace(b, i+1)
		vEnd := skipValue(b, i)
		if vEnd < 0 {
			return method, id, false
		}
		switch string(key) {
		case "method":
			_ = decodeString(b[i:vEnd], &method)
		case "id":
			id = json.RawMessage(b[i:vEnd])
		}
		i = vEnd
	}
}

// plainString returns the content of the JSON string s (quotes
// included) when it reads as it is: no escape, no control character,
// valid UTF-8.
func plainString(s []byte) ([]byte, bool) {
	if len(s) < 2 || s[0] != '"' || s[len(s)-1] != '"' {
		return nil, false
	}
	in := s[1 : len(s)-1]
	for _, c := range in {
		if c < 0x20 || c == '\\' || c == '"' {
			return nil, false
		}
	}
	return in, utf8.Valid(in)
}

// decodeString is json.Unmarshal of s into out, without the decoder when
// s reads as it is (plainString).
func decodeString(s []byte, out *string) error {
	if in, ok := plainString(s); ok {
		*out = string(in)
		return nil
	}
	return json.Unmarshal(s, out)
}

// memberName is the decoded name of an object member, s its JSON string;
// a plain one is s's own bytes.
func memberName(s []byte) ([]byte, error) {
	if in, ok := plainString(s); ok {
		return in, nil
	}
	var name string
	if err := json.Unmarshal(s, &name); err != nil {
		return nil, err
	}
	return []byte(name), nil
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipValue returns the end of the JSON value starting at b[i], or -1 when
// it does not end within b. It checks structure only as far as finding the
// end needs.
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		return skipNested(b, i)
	}
	for j := i; j < len(b); j++ {
		switch b[j] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return j
		}
	}
	return -1
}

func skipString(b []byte, i int) int {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return -1
}

func skipNested(b []byte, i int) int {
	depth := 0
	for j := i; j < len(b); j++ {
		switch b[j] {
		case '"':
			end := skipString(b, j)
			if end < 0 {
				return -1
			}
			j = end - 1
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				return j + 1
			}
		}
	}
	return -1
}
