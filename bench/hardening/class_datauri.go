package main

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
	want  want
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
	{"base64 with spaces", b64tail(" QUJD REVG"), wantEither},
	{"base64 with CR LF", b64tail("\r\nQUJD"), wantEither},
	{"base64 with a tab", b64tail("\tQUJD"), wantEither},
	{"padding inside", b64tail("QQ==QUJD"), wantReject},
	{"missing padding", b64tail("QQ"), wantEither},
	{"too much padding", b64tail("QQ==="), wantReject},
	{"leading padding", b64("="), wantReject},
	{"padding only", func(m string) string { return "data:text/plain;base64,====" }, wantReject},
	{"a dangling sixth bit", b64tail("Q"), wantReject},
	{"bad character", b64tail("QU*D"), wantReject},
	{"URL-safe alphabet", b64tail("-_-_"), wantReject},
	{"NUL in the payload", b64tail("QU\x00D"), wantReject},
	{"no comma", func(m string) string { return "data:text/plain;base64" + m }, wantReject},
	{"empty payload", func(string) string { return "data:text/plain;base64," }, wantReject},
	{"no media type", func(m string) string { return "data:;base64," + m }, wantEither},
	{"percent-encoded", func(m string) string { return "data:text/plain," + m + "%20ok" }, wantEither},
	{"bad percent escape", func(m string) string { return "data:text/plain," + m + "%ZZ" }, wantReject},
	{"upper-case scheme", func(m string) string { return "DATA:text/plain;base64," + m }, wantEither},
	{"base64 twice", func(m string) string { return "data:text/plain;base64;base64," + m }, wantEither},
	{"charset before base64", func(m string) string { return "data:text/plain;charset=utf-8;base64," + m }, wantEither},
	{"media type of 8 KiB", func(m string) string { return "data:text/" + strings.Repeat("x", 8<<10) + ";base64," + m }, wantEither},
	{"media type with CR LF", func(m string) string { return "data:text/plain\r\nX-Injected: 1;base64," + m }, wantReject},
	{"declared PNG, text content", func(m string) string { return "data:image/png;base64," + m }, wantReject},
	{"https scheme", func(string) string { return "https://127.0.0.1:9/secret" }, wantReject},
	{"file scheme", func(string) string { return "file:///etc/passwd" }, wantReject},
	{"javascript scheme", func(string) string { return "javascript:alert(1)" }, wantReject},
	{"not a URI", func(string) string { return "hello there" }, wantReject},
}

// dataURIs sends each variant to upload_file in both eras, with the key
// before the file (the single-write path) and after it (the spool path).
func dataURIs(ctx context.Context, e *env) []batch {
	var leg, mod []hcase
	for _, v := range dataURIVariants {
		for _, first := range []string{"key", "file"} {
			leg = append(leg, dataURICase(sLegacy, v, first))
			mod = append(mod, dataURICase(sModern, v, first))
		}
	}
	return []batch{{"data URIs", sLegacy, leg}, {"data URIs", sModern, mod}}
}

func dataURICase(era surface, v dataURIVariant, first string) hcase {
	key := fmt.Sprintf("hard/datauri-%d", next())
	c := toolCaseOrder(era, fmt.Sprintf("upload_file %s (%s first)", v.label, first), v.want, "upload_file", func(e *env) map[string]any {
		return map[string]any{"key": key, "file": v.uri(e.sec.marker())}
	}, first)
	c.check = sameKey(key)
	return c
}
