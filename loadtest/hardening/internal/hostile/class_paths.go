package hostile

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"unicode/utf8"
)

// keyTrick is a key as the server should see it after one decoding, and
// whether the key rules (docs/control-api.md: no leading or trailing '/',
// no empty, '.' or '..' segment, no backslash or control character, valid
// UTF-8, not the reserved .mcpblob folder) refuse it. "{n}" is replaced by
// a number unique to the input.
type keyTrick struct {
	key string
	bad bool
}

var keyTricks = []keyTrick{
	{"../hard-x{n}", true},
	{"hard/../../x{n}", true},
	{"hard/./x{n}", true},
	{"hard//x{n}", true},
	{"/hard/x{n}", true},
	{"hard/x{n}/", true},
	{`hard\..\x{n}`, true},
	{`..\x{n}`, true},
	{"hard/x{n}\x00.txt", true},
	{"hard/x{n}\r\nX-Injected: 1", true},
	{"hard/\xc0\xae\xc0\xae/x{n}", true},         // overlong UTF-8 ".."
	{"hard/\xe0\x80\xae\xe0\x80\xae/x{n}", true}, // 3-byte overlong ".."
	{"hard/x{n}\xff", true},
	{".mcpblob/claims/links/x{n}", true},
	{".mcpblob/tmp/x{n}", true},
	{".mcpblob/meta/" + BaseText, true},
	{".mcpblob/token-keys", true},
	{".mcpblob", true},
	// Aliases of a baseline object: refused, never read or overwritten.
	{"hard/base/../base/text.txt", true},
	{"hard/base/./text.txt", true},
	{"hard//base/text.txt", true},
	{"./" + BaseText, true},
	{BaseText + "/", true},
	{BaseText + "\x00.jpg", true},
	// Valid keys that look like tricks: either answer, but stored exactly.
	{".MCPBLOB/claims/links/x{n}", false},
	{".Mcpblob/meta/x{n}", false},
	{"x{n}/.mcpblob/y", false},
	{"hard/caf\u00e9-{n}", false},
	{"hard/cafe\u0301-{n}", false},
	{"hard/\uff0e\uff0e/x{n}", false},
	{"hard/\u2024\u2024/x{n}", false},
	{"\uff0emcpblob/x{n}", false},
	{".mcpblob\u200b/x{n}", false},
	{"hard/x{n}\u202egpj.txt", false},
	{"HARD/BASE/TEXT.TXT", false},
	{"hard/%2e%2e/x{n}", false},
}

func (k keyTrick) make() string { return strings.ReplaceAll(k.key, "{n}", fmt.Sprint(next())) }

func (k keyTrick) want() Want {
	if k.bad {
		return WantReject
	}
	return WantEither
}

// pathTricks sends every key trick to every surface that takes a key, in
// every encoding that decodes to it once, plus double encodings and
// routing tricks on the token surfaces.
func pathTricks(ctx context.Context, e *Env) []Batch {
	var v1, leg, mod, str []Case
	for _, t := range keyTricks {
		v1 = append(v1, v1KeyCases(t)...)
		leg = append(leg, mcpKeyCases(Legacy, t)...)
		mod = append(mod, mcpKeyCases(Modern, t)...)
		k := t.make()
		str = append(str, readCase(Legacy, fmt.Sprintf("2025 stream %q", k), t.want(), "resources/stream", "blob:///"+k),
			readCase(Modern, fmt.Sprintf("2026 stream %q", k), t.want(), "resources/stream", "blob:///"+k))
	}
	v1 = append(v1, listPrefixCases()...)
	leg = append(leg, listToolCases(Legacy)...)
	mod = append(mod, listToolCases(Modern)...)
	d, u, page := routingCases()
	return []Batch{{"path tricks", V1, v1}, {"path tricks", Legacy, leg}, {"path tricks", Modern, mod},
		{"path tricks", Stream, str}, {"path tricks", D, d}, {"path tricks", U, u}, {"path tricks", Page, page}}
}

// encodings returns the request targets for /v1/blobs/{key} that decode
// once to key: segment-escaped, every byte escaped, and raw when the raw
// bytes can go in a request line.
func encodings(key string) map[string]string {
	out := map[string]string{"escaped": "/v1/blobs/" + EscapeKey(key), "all-escaped": "/v1/blobs/" + escapeAll(key)}
	if !strings.ContainsAny(key, "% ?#\x00\r\n\t") && !strings.ContainsFunc(key, func(r rune) bool { return r < 0x20 }) {
		out["raw"] = "/v1/blobs/" + key
	}
	return out
}

func escapeAll(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		fmt.Fprintf(&b, "%%%02X", s[i])
	}
	return b.String()
}

// v1KeyCases: PUT in each encoding, GET, DELETE, the double-encoded PUT
// (which must store the once-decoded key, never decode twice), and the key
// in POST /v1/links and /v1/uploads.
func v1KeyCases(t keyTrick) []Case {
	var cs []Case
	for enc, target := range encodings(t.make()) {
		k := strings.TrimPrefix(target, "/v1/blobs/")
		c := rawCase(fmt.Sprintf("PUT %s %s", enc, target), t.want(), http.MethodPut, target, "alice", []byte("hostile body"), "Content-Type: text/plain")
		c.Check = sameKey(mustUnescape(k))
		cs = append(cs, c)
	}
	k := t.make()
	dbl := "/v1/blobs/" + EscapeKey(EscapeKey(k))
	// The same body as the other PUTs: a key with nothing to escape is the
	// same key, and concurrent identical writes leave one known object.
	c := rawCase("PUT double-escaped "+dbl, WantEither, http.MethodPut, dbl, "alice", []byte("hostile body"), "Content-Type: text/plain")
	c.Check = sameKey(EscapeKey(k))
	cs = append(cs, c)
	if t.bad { // reads and deletes through a refused key must fail (aliases of baseline objects among them)
		cs = append(cs, noStore(rawCase("GET "+EscapeKey(t.key), WantReject, http.MethodGet, "/v1/blobs/"+EscapeKey(t.key), "alice", nil)),
			noStore(rawCase("DELETE "+EscapeKey(t.key), WantReject, http.MethodDelete, "/v1/blobs/"+EscapeKey(t.key), "alice", nil)))
	}
	// JSON cannot carry invalid UTF-8 (RFC 8259 §8.1): what a server makes
	// of such a body is its choice, as long as it answers clearly.
	jw := t.want()
	if !utf8.ValidString(t.key) {
		jw = WantEither
	}
	return append(cs,
		jsonCase(fmt.Sprintf("POST /v1/links key %q", t.key), jw, "/v1/links", map[string]any{"key": rawStr(t.key)}),
		jsonCase(fmt.Sprintf("POST /v1/uploads key %q", k), jw, "/v1/uploads", map[string]any{"key": rawStr(t.make())}))
}

func mustUnescape(s string) string {
	u, err := url.PathUnescape(s)
	if err != nil {
		return s
	}
	return u
}

// jsonCase POSTs v as JSON to a /v1 path as alice.
func jsonCase(name string, w Want, path string, v any) Case {
	return jsonCaseAs(name, w, "alice", path, v)
}

// mcpKeyCases: the key in each blob tool and in resources/read.
func mcpKeyCases(era Surface, t keyTrick) []Case {
	k := t.make()
	jk, ok := jsonStr(k)
	w := t.want()
	if !ok {
		w = WantEither // see v1KeyCases: JSON cannot carry invalid UTF-8
	}
	up := toolCase(era, fmt.Sprintf("upload_file key %q", k), w, "upload_file", func(e *Env) map[string]any {
		return map[string]any{"key": jk, "file": e.dataURI("text/plain")}
	})
	up.WellFormed = ok
	if ok {
		up.Check = sameKey(k)
	}
	cs := []Case{up}
	jt, _ := jsonStr(t.key)
	tools := []string{"stat_blob", "delete_blob", "get_download_link"}
	if !t.bad && !strings.Contains(t.key, "{n}") {
		// A valid fixed key (HARD/BASE/TEXT.TXT): the /v1 inputs store it,
		// so no input here deletes or writes it (inputs run concurrently).
		tools, cs = tools[:1], nil
	}
	for _, tool := range tools {
		c := toolCase(era, fmt.Sprintf("%s key %q", tool, t.key), w, tool, func(*Env) map[string]any {
			return map[string]any{"key": jt}
		})
		c.WellFormed = ok
		cs = append(cs, c)
	}
	for _, uri := range []string{"blob:///" + t.key, "blob:///" + EscapeKey(t.key)} {
		c := readCase(era, fmt.Sprintf("resources/read %q", uri), t.want(), "resources/read", uri)
		if !utf8.ValidString(uri) {
			c.Want, c.WellFormed = WantEither, false
		}
		cs = append(cs, c)
	}
	return cs
}

// EscapeKey percent-encodes each segment of key, keeping the slashes
// (docs/control-api.md).
func EscapeKey(key string) string {
	segs := strings.Split(key, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return strings.Join(segs, "/")
}
