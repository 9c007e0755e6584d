package framing

import (
	"bufio"
	"bytes"
	"strconv"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"
)

// checkCases are header blocks (after the request line) and what Check
// says of them.
var checkCases = []struct {
	name, raw string
	want      error
}{
	{"empty", "", nil},
	{"host only", "Host: a\r\n\r\n", nil},
	{"content-length", "Host: a\r\nContent-Length: 5\r\n\r\n", nil},
	{"chunked", "Host: a\r\nTransfer-Encoding: chunked\r\n\r\n", nil},
	{"chunked, name in lower case, no space", "Host: a\r\ntransfer-encoding:chunked\r\n\r\n", nil},
	{"chunked, spaces around", "Host: a\r\nTRANSFER-ENCODING:  chunked  \r\n\r\n", nil},
	{"field named like it", "Host: a\r\nTransfer-Encoding-X: gzip\r\nContent-Length-X: 1\r\nTransfer-Encoding: chunked\r\n\r\n", nil},
	{"a space inside a value", "Host: a\r\nUser-Agent: x y\r\n\r\n", nil},
	{"both", "Host: a\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n", ErrBothLengths},
	{"both, CL first", "Host: a\r\ncontent-length: 5\r\nTransfer-Encoding: chunked\r\n\r\n", ErrBothLengths},
	{"obs-fold TE", "Host: a\r\nTransfer-Encoding:\r\n chunked\r\n\r\n", ErrObsFold},
	{"obs-fold by a tab", "Host: a\r\nX-A: b\r\n\tc\r\n\r\n", ErrObsFold},
	{"a tab before the value", "Host: a\r\nTransfer-Encoding:\tchunked\r\n\r\n", ErrTransferEncoding},
	{"a tab after the value", "Host: a\r\nTransfer-Encoding: chunked\t\r\n\r\n", ErrTransferEncoding},
	{"upper case", "Host: a\r\nTransfer-Encoding: CHUNKED\r\n\r\n", ErrTransferEncoding},
	{"capitalised", "Host: a\r\nTransfer-Encoding: Chunked\r\n\r\n", ErrTransferEncoding},
	{"identity", "Host: a\r\nTransfer-Encoding: identity\r\n\r\n", ErrTransferEncoding},
	{"a list", "Host: a\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", ErrTransferEncoding},
	{"chunked twice in one field", "Host: a\r\nTransfer-Encoding: chunked, chunked\r\n\r\n", ErrTransferEncoding},
	{"two fields", "Host: a\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n", ErrTransferEncoding},
	{"empty value", "Host: a\r\nTransfer-Encoding:\r\n\r\n", ErrTransferEncoding},
	{"a bare CR", "Host: a\r\nTransfer-Encoding: chunked\r\r\n\r\n", ErrTransferEncoding},
	{"bare LF in a field", "Host: a\nTransfer-Encoding: chunked\r\n\r\n", ErrBareLF},
	{"bare LF everywhere", "Host: a\nContent-Length: 0\n\n", ErrBareLF},
	{"bare LF ends the block", "Host: a\r\n\n", ErrBareLF},
	{"a lone LF", "\n", ErrBareLF},
	{"unterminated", "Host: a\r\n", ErrUnterminated},
	{"no line end", "Host: a", ErrUnterminated},
	{"after the block is not looked at", "Host: a\r\n\r\nX\n", nil},
}

func TestCheck(t *testing.T) {
	for _, tc := range checkCases {
		if got := Check([]byte(tc.raw)); got != tc.want {
			t.Errorf("%s: Check(%q) = %v, want %v", tc.name, tc.raw, got, tc.want)
		}
	}
}

func TestCheckDoesNotAllocate(t *testing.T) {
	raw := []byte("Host: 127.0.0.1:8080\r\nUser-Agent: k6\r\nContent-Type: application/json\r\n" +
		"Accept: application/json, text/event-stream\r\nContent-Length: 120\r\nMcp-Session-Id: abc\r\n\r\n")
	if n := testing.AllocsPerRun(100, func() { _ = Check(raw) }); n != 0 {
		t.Errorf("Check allocates %v times per call", n)
	}
}

// TestFasthttpGap pins what fasthttp (go.mod's version) does with the
// requests Check refuses: it parses them without error, frames the body by
// Transfer-Encoding and keeps the connection. Should an upgrade refuse any
// of them, this test says so (and package framing's doc, and the server's
// refuseFraming, can say less).
func TestFasthttpGap(t *testing.T) {
	for _, tc := range []struct{ name, head string }{
		{"both", "Host: a\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n"},
		{"obs-fold", "Host: a\r\nTransfer-Encoding:\r\n chunked\r\n\r\n"},
		{"obs-fold with content-length", "Host: a\r\nContent-Length: 5\r\nTransfer-Encoding:\r\n chunked\r\n\r\n"},
		{"tab", "Host: a\r\nTransfer-Encoding:\tchunked\r\nContent-Length: 5\r\n\r\n"},
		{"upper case", "Host: a\r\nTransfer-Encoding: CHUNKED\r\nContent-Length: 5\r\n\r\n"},
		{"bare LF", "Host: a\nTransfer-Encoding: chunked\nContent-Length: 5\r\n\r\n"},
	} {
		var h fasthttp.RequestHeader
		err := h.Read(bufio.NewReader(strings.NewReader("POST / HTTP/1.1\r\n" + tc.head)))
		if err != nil || h.ContentLength() != -1 || h.ConnectionClose() {
			t.Errorf("%s: fasthttp now gives err %v, content length %d, close %v; was nil, -1 (chunked), false",
				tc.name, err, h.ContentLength(), h.ConnectionClose())
		}
		if Check(h.RawHeaders()) == nil {
			t.Errorf("%s: Check passes fasthttp's raw headers %q", tc.name, h.RawHeaders())
		}
	}
	var h fasthttp.RequestHeader
	err := h.Read(bufio.NewReader(strings.NewReader("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: identity\r\nContent-Length: 5\r\n\r\n")))
	if err != nil || h.ContentLength() != 5 {
		t.Errorf("identity: fasthttp now gives err %v, content length %d; was nil, 5", err, h.ContentLength())
	}
}

// FuzzCheck compares Check with a plainer reading of the same rules.
func FuzzCheck(f *testing.F) {
	for _, tc := range checkCases {
		f.Add([]byte(tc.raw))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		got, want := Check(raw), referenceCheck(string(raw))
		if got != want {
			t.Fatalf("Check(%q) = %v, the reference says %v", raw, got, want)
		}
	})
}

// referenceCheck is Check written by splitting lines.
func referenceCheck(raw string) error {
	if raw == "" {
		return nil
	}
	lines := strings.SplitAfter(raw, "\n")
	te, cl := false, false
	for k, l := range lines {
		switch {
		case !strings.HasSuffix(l, "\n"):
			return ErrUnterminated
		case !strings.HasSuffix(l, "\r\n"):
			return ErrBareLF
		}
		l = strings.TrimSuffix(l, "\r\n")
		if l == "" {
			break
		}
		if strings.IndexAny(l[:1], " \t") == 0 || k+1 < len(lines) && strings.IndexAny(lines[k+1], " \t") == 0 {
			return ErrObsFold
		}
		name, value, colon := strings.Cut(l, ":")
		switch {
		case colon && asciiFold(name, "transfer-encoding"):
			if te || strings.Trim(value, " ") != "chunked" {
				return ErrTransferEncoding
			}
			te = true
		case colon && asciiFold(name, "content-length"):
			cl = true
		}
	}
	if te && cl {
		return ErrBothLengths
	}
	return nil
}

// FuzzFramingAgrees: whenever fasthttp accepts a request and Check passes
// its raw header block, fasthttp frames the body as a reader that knows
// only CRLF and no folding does: by Transfer-Encoding when it is there,
// else by Content-Length, else none. That is the property that closes the
// smuggling: no front that frames by the RFC sees another body.
func FuzzFramingAgrees(f *testing.F) {
	for _, tc := range checkCases {
		f.Add([]byte(tc.raw))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var h fasthttp.RequestHeader
		if h.Read(bufio.NewReader(bytes.NewReader(append([]byte("POST / HTTP/1.1\r\n"), raw...)))) != nil {
			return // fasthttp refuses it: answered 400, closed
		}
		if Check(h.RawHeaders()) != nil {
			return
		}
		if got, want := h.ContentLength(), strictLength(string(h.RawHeaders())); got != want {
			t.Fatalf("raw %q: fasthttp frames by %d, a strict reader by %d", h.RawHeaders(), got, want)
		}
	})
}

// strictLength is the body framing of a header block read line by line on
// CRLF: -1 chunked, n a Content-Length, -2 none (fasthttp's values).
func strictLength(raw string) int {
	head, _, _ := strings.Cut(raw, "\r\n\r\n")
	n := -2
	for l := range strings.SplitSeq(head, "\r\n") {
		name, value, _ := strings.Cut(l, ":")
		switch {
		case asciiFold(name, "transfer-encoding"):
			return -1
		case asciiFold(name, "content-length"):
			v, err := strconv.Atoi(strings.Trim(value, " \t"))
			if err != nil {
				return -3
			}
			n = v
		}
	}
	return n
}

// asciiFold is strings.EqualFold without Unicode's folds (ſ is no s in a
// field name).
func asciiFold(a, b string) bool { return len(a) == len(b) && strings.EqualFold(a, b) }

// BenchmarkCheck is Check's cost on the header block of a typical MCP
// request (what every request pays).
func BenchmarkCheck(b *testing.B) {
	raw := []byte("Host: 127.0.0.1:8080\r\nUser-Agent: mcp-client/1.0\r\nContent-Type: application/json\r\n" +
		"Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\n" +
		"Mcp-Name: stat_blob\r\nAuthorization: Bearer 0123456789abcdef0123456789abcdef\r\nContent-Length: 120\r\n\r\n")
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		if Check(raw) != nil {
			b.Fatal("refused")
		}
	}
}
