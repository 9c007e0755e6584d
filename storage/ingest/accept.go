package ingest

import (
	"mime"
	"strings"

	"github.com/mcpblob/mcpblob/core/codec"
	"github.com/mcpblob/mcpblob/storage"
)

// An accept list holds media ranges ("image/*") and dot-extensions
// (".pdf"). The declared type, the filename's extension and the sniffed
// content are checked together, so that none of them vouches for a file
// the others contradict (a part named "x.pdf" declared text/html does not
// pass [".pdf"]):
//
//   - a declared type that a media range of the list matches passes;
//   - a declared type that is the type of a listed extension passes
//     (application/pdf for ".pdf", whatever the filename);
//   - a declared application/octet-stream (no claim) passes when the
//     filename's extension is listed; then the content decides: it may not
//     sniff as another binary format than the extension's, nor as markup
//     (HTML, XML, SVG) that the list does not name.
//
// A declared type that makes a claim contradicting the extension is
// refused before any byte is read.

// extMediaTypes maps extensions to the declared types that agree with them,
// beyond the sniffable ones of extTypes (which agree with their type) and
// the platform's table (mime.TypeByExtension).
var extMediaTypes = map[string][]string{
	".txt": {"text/plain"}, ".csv": {"text/csv"}, ".md": {"text/markdown"}, ".json": {"application/json"},
	".xml": {"application/xml", "text/xml"}, ".html": {"text/html"}, ".htm": {"text/html"},
	".svg": {"image/svg+xml"}, ".js": {"text/javascript", "application/javascript"}, ".css": {"text/css"},
	".doc": {"application/msword"}, ".xls": {"application/vnd.ms-excel"}, ".ppt": {"application/vnd.ms-powerpoint"},
	".docx": {"application/vnd.openxmlformats-officedocument.wordprocessingml.document"},
	".xlsx": {"application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"},
	".pptx": {"application/vnd.openxmlformats-officedocument.presentationml.presentation"},
	".odt":  {"application/vnd.oasis.opendocument.text"}, ".ods": {"application/vnd.oasis.opendocument.spreadsheet"},
	".odp": {"application/vnd.oasis.opendocument.presentation"}, ".epub": {"application/epub+zip"},
	".rtf": {"application/rtf", "text/rtf"}, ".tar": {"application/x-tar"}, ".mp3": {"audio/mpeg"},
	".m4a": {"audio/mp4"}, ".mp4": {"video/mp4"}, ".webm": {"video/webm", "audio/webm"}, ".ogg": {"audio/ogg"},
	".ogv": {"video/ogg"}, ".mov": {"video/quicktime"}, ".avif": {"image/avif"}, ".heic": {"image/heic"},
}

// extensionType reports whether mt (canonical) is a type of the
// dot-extension ext.
func extensionType(ext, mt string) bool {
	if extTypes[ext] == mt {
		return true
	}
	for _, t := range extMediaTypes[ext] {
		if t == mt {
			return true
		}
	}
	return canonical(mime.TypeByExtension(ext)) == mt && mt != ""
}

// typeListed reports whether a media range of accept (its dot-extensions
// left aside) matches mt. Unlike codec.MatchAccept, a list of extensions
// only matches no type.
func typeListed(accept []string, mt string) bool {
	var ranges []string
	for _, a := range accept {
		if !strings.HasPrefix(strings.TrimSpace(a), ".") {
			ranges = append(ranges, a)
		}
	}
	return len(ranges) > 0 && codec.MatchAccept(ranges, mt)
}

// extensionAccepting returns the listed dot-extension whose type mt
// (canonical) is, or "".
func extensionAccepting(accept []string, mt string) string {
	for _, a := range accept {
		if ext := strings.ToLower(strings.TrimSpace(a)); strings.HasPrefix(ext, ".") && extensionType(ext, mt) {
			return ext
		}
	}
	return ""
}

// acceptDeclared applies the accept list to a declared type (parameters
// stripped) and filename before any byte is read. ok reports whether the
// upload may proceed; ext, when set, is the listed extension that admitted
// a declared application/octet-stream, which the content must then agree
// with (sniffedAccepted, markupProblem).
func acceptDeclared(accept []string, mt, filename string) (ok bool, ext string) {
	d := canonical(mt)
	switch {
	case len(accept) == 0, typeListed(accept, d), extensionAccepting(accept, d) != "":
		return true, ""
	case d == storage.DefaultMediaType:
		ext = extensionListed(accept, filename)
		return ext != "", ext
	}
	return false, ""
}

// markupProblem is why content starting with head does not fit an upload
// admitted by a listed extension for a declared application/octet-stream,
// or "": it is markup (HTML, XML, SVG) of a type the list names neither as a
// media range nor as an extension. Sniffed binary formats are checked by
// sniffedAccepted.
func markupProblem(accept []string, ext string, head []byte) string {
	if Sniff(head) != "" {
		return ""
	}
	m := sniffMarkup(head)
	if m == "" || typeListed(accept, m) || extensionAccepting(accept, m) != "" {
		return ""
	}
	return "content is " + m + ", not a " + ext + " file"
}

// markupPrefixes start content that browsers sniff as HTML or XML (the
// WHATWG MIME Sniffing Standard, §7.1, plus the root elements of SVG),
// after leading whitespace and compared case-insensitively; each must be
// followed by a space or '>' except "<!--" and "<?xml".
var markupPrefixes = []struct{ prefix, mt string }{
	{"<?xml", "application/xml"}, {"<!--", "text/html"}, {"<!doctype html", "text/html"}, {"<html", "text/html"},
	{"<head", "text/html"}, {"<script", "text/html"}, {"<iframe", "text/html"}, {"<h1", "text/html"},
	{"<div", "text/html"}, {"<font", "text/html"}, {"<table", "text/html"}, {"<a", "text/html"},
	{"<style", "text/html"}, {"<title", "text/html"}, {"<b", "text/html"}, {"<body", "text/html"},
	{"<br", "text/html"}, {"<p", "text/html"}, {"<svg", "image/svg+xml"},
}

// sniffMarkup returns the markup type content starting with head would be
// sniffed as by a browser, or "".
func sniffMarkup(head []byte) string {
	s := strings.TrimLeft(string(head), "\t\n\x0c\r ")
	for _, m := range markupPrefixes {
		if len(s) < len(m.prefix) || !strings.EqualFold(s[:len(m.prefix)], m.prefix) {
			continue
		}
		if m.prefix == "<!--" || m.prefix == "<?xml" {
			return m.mt
		}
		if rest := s[len(m.prefix):]; rest == "" || rest[0] == ' ' || rest[0] == '>' || rest[0] == '\t' || rest[0] == '\n' || rest[0] == '/' {
			return m.mt
		}
	}
	return ""
}
