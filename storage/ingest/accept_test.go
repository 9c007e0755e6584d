package ingest

import (
	"errors"
	"strings"
	"testing"
)

// acceptCases check the declared type, the filename's extension and the
// sniffed content together against an accept list (checked alone, a part
// named x.pdf declared text/html passed [".pdf"] and was stored as HTML).
var acceptCases = []struct {
	accept             []string
	filename, declared string
	content            string
	ok                 bool
	storeAs            string // MediaType after Close, when ok
}{
	{[]string{".pdf"}, "x.pdf", "text/html", "<html><script>alert(1)</script>", false, ""},
	{[]string{".pdf"}, "y.html", "text/html", "<html><script>alert(1)</script>", false, ""},
	{[]string{".pdf"}, "x.pdf", "image/svg+xml", "<svg xmlns='http://www.w3.org/2000/svg'/>", false, ""},
	{[]string{".pdf"}, "x.pdf", "image/png", string(png), false, ""},
	{[]string{".pdf"}, "x.pdf", "application/pdf", "%PDF-1.7 tiny", true, "application/pdf"},
	{[]string{".pdf"}, "", "application/pdf", "%PDF-1.7 tiny", true, "application/pdf"},
	{[]string{".pdf"}, "x.pdf", "application/octet-stream", "%PDF-1.7 tiny", true, "application/pdf"},
	{[]string{".pdf"}, "x.pdf", "application/pdf", "<html>", false, ""},
	{[]string{".pdf"}, "x.pdf", "application/octet-stream", "<!DOCTYPE html><script>alert(1)</script>", false, ""},
	{[]string{".pdf"}, "x.pdf", "application/octet-stream", " \n\t<SCRIPT>alert(1)</SCRIPT>", false, ""},
	{[]string{".pdf"}, "x.pdf", "application/octet-stream", "<?xml version='1.0'?><svg/>", false, ""},
	{[]string{".pdf"}, "x.pdf", "application/octet-stream", "PK\x03\x04zip", false, ""},
	{[]string{".pdf"}, "x.pdf", "application/octet-stream", "plain words", true, "application/octet-stream"},
	{[]string{".pdf"}, "", "application/octet-stream", "%PDF-1.7", false, ""},
	{[]string{".docx"}, "a.docx", "application/vnd.openxmlformats-officedocument.wordprocessingml.document", "PK\x03\x04", true,
		"application/vnd.openxmlformats-officedocument.wordprocessingml.document"},
	{[]string{".docx"}, "a.docx", "application/octet-stream", "PK\x03\x04", true, "application/zip"},
	{[]string{".docx"}, "a.docx", "text/html", "PK\x03\x04", false, ""},
	{[]string{".docx"}, "a.docx", "application/octet-stream", "<html><body>", false, ""},
	{[]string{".txt"}, "notes.txt", "text/plain", "<html> is a tag", true, "text/plain"},
	{[]string{"image/*", ".pdf"}, "x.pdf", "text/html", "<html>", false, ""},
	{[]string{"image/*", ".pdf"}, "p.png", "image/png", string(png), true, "image/png"},
	{[]string{"image/*", ".pdf"}, "x.pdf", "application/octet-stream", "PK\x03\x04", false, ""},
	{[]string{".html"}, "page.html", "text/html", "<html>", true, "text/html"},
	{[]string{"text/*"}, "x.pdf", "text/html", "<html>", true, "text/html"},
	{nil, "x.pdf", "text/html", "<html>", true, "text/html"},
}

func TestAcceptTogether(t *testing.T) {
	be, _ := backends()[0].new(t)
	for i, tc := range acceptCases {
		spec := Spec{Key: "a/" + string(rune('a'+i)), Filename: tc.filename, MediaType: tc.declared, Accept: tc.accept}
		u, err := Begin(t.Context(), be, spec)
		if err == nil {
			u.Write([]byte(tc.content))
			err = u.Close()
		}
		what := strings.Join(tc.accept, ",") + " / " + tc.filename + " / " + tc.declared + " / " + tc.content[:min(len(tc.content), 12)]
		switch {
		case tc.ok && err != nil:
			t.Errorf("%s: %v, want it accepted", what, err)
		case !tc.ok && !errors.Is(err, ErrNotAccepted) && !errors.Is(err, ErrTypeMismatch):
			t.Errorf("%s: %v, want ErrNotAccepted or ErrTypeMismatch", what, err)
		case tc.ok && u.MediaType() != tc.storeAs:
			t.Errorf("%s: stored as %q, want %q", what, u.MediaType(), tc.storeAs)
		}
		if u != nil {
			u.Abort()
		}
	}
}

// FuzzAcceptDeclared: whatever a client declares and names, acceptDeclared
// admits it only for a reason the accept list gives, and markupProblem
// never refuses content the list names.
func FuzzAcceptDeclared(f *testing.F) {
	for _, tc := range acceptCases {
		f.Add(strings.Join(tc.accept, ","), tc.filename, tc.declared, []byte(tc.content))
	}
	f.Fuzz(func(t *testing.T, list, filename, declared string, head []byte) {
		var accept []string
		if list != "" {
			accept = strings.Split(list, ",")
		}
		d := canonical(declared)
		ok, ext := acceptDeclared(accept, declared, filename)
		switch {
		case !ok && (len(accept) == 0 || typeListed(accept, d)):
			t.Fatalf("%q refused by %q although listed", declared, accept)
		case ok && ext != "" && (d != "application/octet-stream" || extensionListed(accept, filename) != ext):
			t.Fatalf("%q / %q admitted by extension %q of %q", declared, filename, ext, accept)
		case ok && ext == "" && len(accept) > 0 && !typeListed(accept, d) && extensionAccepting(accept, d) == "":
			t.Fatalf("%q admitted by %q for no reason", declared, accept)
		}
		m := sniffMarkup(head)
		if m != "" && m != "text/html" && m != "application/xml" && m != "image/svg+xml" {
			t.Fatalf("sniffMarkup = %q", m)
		}
		if p := markupProblem(accept, ".x", head); p != "" && (m == "" || typeListed(accept, m)) {
			t.Fatalf("markupProblem(%q, %q) = %q", accept, head, p)
		}
	})
}
