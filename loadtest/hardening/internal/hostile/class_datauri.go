package hostile

import (
	"context"
	"fmt"
	"strings"
)

// dataURIVariant is a file argument for upload_file: m is a fresh payload
// marker (24 base64 characters, registered as a secret).
type dataURIVariant struct {
	label string
	uri   func(m string) string
	want  Want
}

func b64(prefix string) func(string) string {
	return func(m string) string { return "data:text/plain;base64," + prefix + m }
}

func b64tail(tail string) func(string) string {
	return func(m string) string { return "data:text/plain;base64," + m + tail }
}

// dataURIVariants: whitespace and padding errors in base64, header
// malformations, other schemes (never dereferenced), and a type the
// content contradicts (docs/uploads.md's validation table).
var dataURIVariants = []dataURIVariant{
	{"base64 with spaces", b64tail(" QUJD REVG"), WantEither},
	{"base64 with CR LF", b64tail("\r\nQUJD"), WantEither},
	{"base64 with a tab", b64tail("\tQUJD"), WantEither},
	{"padding inside", b64tail("QQ==QUJD"), WantReject},
	{"missing padding", b64tail("QQ"), WantEither},
	{"too much padding", b64tail("QQ==="), WantReject},
	{"leading padding", b64("="), WantReject},
	{"padding only", func(m string) string { return "data:text/plain;base64,====" }, WantReject},
	{"a dangling sixth bit", b64tail("Q"), WantReject},
	{"bad character", b64tail("QU*D"), WantReject},
	{"URL-safe alphabet", b64tail("-_-_"), WantReject},
	{"NUL in the payload", b64tail("QU\x00D"), WantReject},
	{"no comma", func(m string) string { return "data:text/plain;base64" + m }, WantReject},
	{"empty payload", func(string) string { return "data:text/plain;base64," }, WantReject},
	{"no media type", func(m string) string { return "data:;base64," + m }, WantEither},
	{"percent-encoded", func(m string) string { return "data:text/plain," + m + "%20ok" }, WantEither},
	{"bad percent escape", func(m string) string { return "data:text/plain," + m + "%ZZ" }, WantReject},
	{"upper-case scheme", func(m string) string { return "DATA:text/plain;base64," + m }, WantEither},
	{"base64 twice", func(m string) string { return "data:text/plain;base64;base64," + m }, WantEither},
	{"charset before base64", func(m string) string { return "data:text/plain;charset=utf-8;base64," + m }, WantEither},
	{"media type of 8 KiB", func(m string) string { return "data:text/" + strings.Repeat("x", 8<<10) + ";base64," + m }, WantEither},
	{"media type with CR LF", func(m string) string { return "data:text/plain\r\nX-Injected: 1;base64," + m }, WantReject},
	{"declared PNG, text content", func(m string) string { return "data:image/png;base64," + m }, WantReject},
	{"https scheme", func(string) string { return "https://127.0.0.1:9/secret" }, WantReject},
	{"file scheme", func(string) string { return "file:///etc/passwd" }, WantReject},
	{"javascript scheme", func(string) string { return "javascript:alert(1)" }, WantReject},
	{"not a URI", func(string) string { return "hello there" }, WantReject},
}

// dataURIs sends each variant to upload_file in both eras, with the key
// before the file (the single-write path) and after it (the spool path).
func dataURIs(ctx context.Context, e *Env) []Batch {
	var leg, mod []Case
	for _, v := range dataURIVariants {
		for _, first := range []string{"key", "file"} {
			leg = append(leg, dataURICase(Legacy, v, first))
			mod = append(mod, dataURICase(Modern, v, first))
		}
	}
	return []Batch{{"data URIs", Legacy, leg}, {"data URIs", Modern, mod}}
}

func dataURICase(era Surface, v dataURIVariant, first string) Case {
	key := fmt.Sprintf("hard/datauri-%d", next())
	c := toolCaseOrder(era, fmt.Sprintf("upload_file %s (%s first)", v.label, first), v.want, "upload_file", func(e *Env) map[string]any {
		return map[string]any{"key": key, "file": v.uri(e.sec.Marker())}
	}, first)
	c.Check = sameKey(key)
	return c
}
