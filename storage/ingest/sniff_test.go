package ingest

import (
	"strconv"
	"strings"
	"testing"

	"github.com/mcpblob/mcpblob/storage"
)

// contentCases are ContentProblem's rules, with today's exact phrases (the
// table core/mcp's TestSniff checked, and more).
var contentCases = []struct {
	declared string
	size     int64
	head     string
	detail   string
	storeAs  string
}{
	{"image/png", 12, "\x89PNG\r\n\x1a\nxxxx", "", "image/png"},
	{"image/jpg", 4, "\xff\xd8\xff\xe0", "", "image/jpg"},
	{"IMAGE/JPEG", 4, "\xff\xd8\xff\xe0", "", "IMAGE/JPEG"},
	{"image/png", 6, "GIF89a", `content is image/gif, not the declared media type "image/png"`, "image/png"},
	{"application/pdf", 5, "hello", `content does not match the declared media type "application/pdf"`, "application/pdf"},
	{"text/plain", 8, "%PDF-1.7", `content is application/pdf, not the declared media type "text/plain"`, "text/plain"},
	{"text/plain; charset=utf-8", 4, "PK\x03\x04", `content is application/zip, not the declared media type "text/plain; charset=utf-8"`, "text/plain; charset=utf-8"},
	{"application/vnd.openxmlformats-officedocument.wordprocessingml.document", 4, "PK\x03\x04", "", "application/vnd.openxmlformats-officedocument.wordprocessingml.document"},
	{"image/webp", 16, "RIFF\x00\x00\x00\x00WEBPVP8 ", "", "image/webp"},
	{"image/webp", 16, "RIFX\x00\x00\x00\x00WEBPVP8 ", `content does not match the declared media type "image/webp"`, "image/webp"},
	{"audio/x-wav", 12, "RIFF\x00\x00\x00\x00WAVE", "", "audio/x-wav"},
	{"application/octet-stream", 8, "anything", "", "application/octet-stream"},
	{"application/octet-stream", 8, "\x1f\x8b\x08\x00\x00\x00\x00\x00", "", "application/gzip"},
	{"text/plain", 0, "", "file is empty", "text/plain"},
	{"image/png", 0, "\x89PNG\r\n\x1a\n", "file is empty", "image/png"},
}

func TestContentProblem(t *testing.T) {
	for _, tc := range contentCases {
		detail, storeAs := ContentProblem(tc.declared, tc.size, []byte(tc.head))
		if detail != tc.detail || storeAs != tc.storeAs {
			t.Errorf("%s / %q: (%q, %q), want (%q, %q)", tc.declared, tc.head, detail, storeAs, tc.detail, tc.storeAs)
		}
	}
}

func TestSniff(t *testing.T) {
	for head, want := range map[string]string{
		"\x89PNG\r\n\x1a\n":            "image/png",
		"\x89PNG\r\n\x1a":              "", // one byte short
		"RIFF1234WAVEfmt ":             "audio/wav",
		"RIFF1234WEBP":                 "image/webp",
		"XXXX1234WEBP":                 "",
		"7z\xbc\xaf\x27\x1c":           "application/x-7z-compressed",
		"\x28\xb5\x2f\xfd":             "application/zstd",
		"MM\x00*":                      "image/tiff",
		"":                             "",
		"<html><body>hi</body></html>": "",
	} {
		if got := Sniff([]byte(head)); got != want {
			t.Errorf("Sniff(%q) = %q, want %q", head, got, want)
		}
	}
	// Every extension names a type Sniff can report.
	for ext, mt := range extTypes {
		if !reliable(mt) {
			t.Errorf("extTypes[%q] = %q, which Sniff never reports", ext, mt)
		}
	}
}

func FuzzContentProblem(f *testing.F) {
	for _, tc := range contentCases {
		f.Add(tc.declared, tc.size, []byte(tc.head))
	}
	f.Fuzz(func(t *testing.T, declared string, size int64, head []byte) {
		detail, storeAs := ContentProblem(declared, size, head)
		got := Sniff(head)
		d := canonical(declared)
		switch {
		case size == 0:
			if detail != "file is empty" || storeAs != declared {
				t.Fatalf("empty: (%q, %q)", detail, storeAs)
			}
		case storeAs != declared:
			// Only octet-stream is upgraded, to the sniffed type, silently.
			if detail != "" || d != storage.DefaultMediaType || got == "" || storeAs != got {
				t.Fatalf("%q upgraded to %q (detail %q, sniffed %q)", declared, storeAs, detail, got)
			}
		case detail == "":
			// Accepted content never contradicts a reliably sniffed declared type.
			if reliable(d) && got != d {
				t.Fatalf("%q accepted with content sniffed as %q", declared, got)
			}
			if got != "" && strings.HasPrefix(d, "text/") {
				t.Fatalf("%q accepted with content sniffed as %q", declared, got)
			}
		default:
			if !strings.Contains(detail, strconv.Quote(declared)) {
				t.Fatalf("detail %q does not name the declared type %q", detail, declared)
			}
			if got == d {
				t.Fatalf("%q refused although the content is %q", declared, got)
			}
		}
	})
}
