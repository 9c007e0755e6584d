package ingest

import (
	"fmt"
	"path"
	"strings"

	"github.com/mcpblob/mcpblob/storage"
)

// SniffLen is how many leading bytes of an upload are kept for sniffing.
const SniffLen = 512

// magic lists the formats whose magic numbers are unambiguous (the declared
// media type is advisory: docs/protocol.md, "File inputs"). For these types a
// declared type that the content contradicts is a lie and is rejected.
var magic = []struct {
	mt     string
	off    int
	prefix string
}{
	{"image/png", 0, "\x89PNG\r\n\x1a\n"},
	{"image/jpeg", 0, "\xff\xd8\xff"},
	{"image/gif", 0, "GIF87a"},
	{"image/gif", 0, "GIF89a"},
	{"image/webp", 8, "WEBP"},
	{"image/tiff", 0, "II*\x00"},
	{"image/tiff", 0, "MM\x00*"},
	{"application/pdf", 0, "%PDF-"},
	{"application/zip", 0, "PK\x03\x04"},
	{"application/zip", 0, "PK\x05\x06"},
	{"application/gzip", 0, "\x1f\x8b\x08"},
	{"application/x-bzip2", 0, "BZh"},
	{"application/x-xz", 0, "\xfd7zXZ\x00"},
	{"application/zstd", 0, "\x28\xb5\x2f\xfd"},
	{"application/x-7z-compressed", 0, "7z\xbc\xaf\x27\x1c"},
	{"audio/ogg", 0, "OggS"},
	{"audio/wav", 8, "WAVE"},
}

// aliases maps declared types to the canonical names in magic.
var aliases = map[string]string{
	"image/jpg":                    "image/jpeg",
	"image/pjpeg":                  "image/jpeg",
	"application/x-gzip":           "application/gzip",
	"application/x-zip-compressed": "application/zip",
	"application/x-pdf":            "application/pdf",
	"audio/x-wav":                  "audio/wav",
	"audio/wave":                   "audio/wav",
	"application/x-zstd":           "application/zstd",
}

// extTypes maps file extensions to the sniffable type their content must
// have. Extensions of container formats (".docx" is a ZIP, ".ogv" an Ogg)
// are deliberately absent: any content passes them.
var extTypes = map[string]string{
	".png":  "image/png",
	".jpg":  "image/jpeg",
	".jpeg": "image/jpeg",
	".jpe":  "image/jpeg",
	".jfif": "image/jpeg",
	".gif":  "image/gif",
	".webp": "image/webp",
	".tif":  "image/tiff",
	".tiff": "image/tiff",
	".pdf":  "application/pdf",
	".zip":  "application/zip",
	".gz":   "application/gzip",
	".tgz":  "application/gzip",
	".bz2":  "application/x-bzip2",
	".xz":   "application/x-xz",
	".zst":  "application/zstd",
	".7z":   "application/x-7z-compressed",
	".wav":  "audio/wav",
}

// Sniff returns the media type of content starting with head when its magic
// number is unambiguous (PNG, JPEG, GIF, WebP, TIFF, PDF, ZIP, gzip, bzip2,
// xz, zstd, 7z, Ogg, WAV), else "".
func Sniff(head []byte) string {
	for _, m := range magic {
		if len(head) >= m.off+len(m.prefix) && string(head[m.off:m.off+len(m.prefix)]) == m.prefix {
			if m.off == 8 && string(head[:4]) != "RIFF" {
				continue
			}
			return m.mt
		}
	}
	return ""
}

// reliable reports whether mt (canonical, lower-case) is sniffed reliably.
func reliable(mt string) bool {
	for _, m := range magic {
		if m.mt == mt {
			return true
		}
	}
	return false
}

// canonical returns the lower-case type/subtype of a media type, parameters
// stripped and aliases resolved.
func canonical(mt string) string {
	base, _, _ := strings.Cut(mt, ";")
	d := strings.ToLower(strings.TrimSpace(base))
	if a, ok := aliases[d]; ok {
		d = a
	}
	return d
}

// ContentProblem checks a file of size bytes whose content starts with head
// against its declared media type: not empty, and content that does not
// contradict the declared type where sniffing is reliable (a PNG declared as
// image/jpeg, a PDF declared as text/plain). It returns the user-facing
// problem ("" when there is none) and the media type to store: declared, or
// the sniffed type when declared is application/octet-stream. Parameters of
// declared ("; charset=...") are ignored by the checks and kept in storeAs.
//
// It is the rule [Upload.Close] applies, exported for callers that decoded
// the bytes elsewhere.
func ContentProblem(declared string, size int64, head []byte) (detail, storeAs string) {
	if size == 0 {
		return "file is empty", declared
	}
	d := canonical(declared)
	got := Sniff(head)
	switch {
	case reliable(d) && got != d:
		if got == "" {
			return fmt.Sprintf("content does not match the declared media type %q", declared), declared
		}
		return fmt.Sprintf("content is %s, not the declared media type %q", got, declared), declared
	case got != "" && strings.HasPrefix(d, "text/"):
		return fmt.Sprintf("content is %s, not the declared media type %q", got, declared), declared
	case got != "" && d == storage.DefaultMediaType:
		return "", got
	}
	return "", declared
}

// acceptDetail is the user-facing phrase for a media type outside accept.
func acceptDetail(mt string, accept []string) string {
	return fmt.Sprintf("media type %q is not accepted (accept: %s)", mt, strings.Join(accept, ", "))
}

// sniffedAccepted reports whether sniffed, the type of the content, passes
// accept: a listed media range (typeListed), a listed extension whose type
// it is, or the filename's listed extension when that extension does not
// name another sniffable type (a "report.pdf" that is a ZIP does not pass
// [".pdf"]; a "letter.docx", a ZIP, passes [".docx"]).
func sniffedAccepted(accept []string, sniffed, filename string) bool {
	if len(accept) == 0 || typeListed(accept, sniffed) || extensionAccepting(accept, sniffed) != "" {
		return true
	}
	ext := extensionListed(accept, filename)
	if ext == "" {
		return false
	}
	want, ok := extTypes[ext]
	return !ok || want == sniffed
}

// extensionListed returns the lower-case extension of filename when accept
// lists it (".pdf"), else "".
func extensionListed(accept []string, filename string) string {
	ext := strings.ToLower(path.Ext(filename))
	if ext == "" {
		return ""
	}
	for _, a := range accept {
		if strings.EqualFold(strings.TrimSpace(a), ext) {
			return ext
		}
	}
	return ""
}
