package codec

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
)

func TestParseDataURI(t *testing.T) {
	ascii := []Param{{"charset", "US-ASCII"}}
	tests := []struct {
		in   string
		want DataURI
	}{
		{"data:,hello", DataURI{DataURIHeader{"text/plain", ascii, false}, []byte("hello")}},
		{"data:,", DataURI{DataURIHeader{"text/plain", ascii, false}, []byte{}}},
		{"data:;base64,", DataURI{DataURIHeader{"text/plain", ascii, true}, []byte{}}},
		{"data:;charset=utf-8,x", DataURI{DataURIHeader{"text/plain", []Param{{"charset", "utf-8"}}, false}, []byte("x")}},
		{"data:text/plain,hello%20world", DataURI{DataURIHeader{"text/plain", nil, false}, []byte("hello world")}},
		{"DATA:Image/PNG;BASE64,iVBORw0KGgo=", DataURI{DataURIHeader{"image/png", nil, true}, []byte("\x89PNG\r\n\x1a\n")}},
		{"Data:image/png;Base64,iVBORw0KGgo=", DataURI{DataURIHeader{"image/png", nil, true}, []byte("\x89PNG\r\n\x1a\n")}},
		{"data:text/plain;Charset=UTF-8;FOO=a%20b;base64,aGk=", DataURI{DataURIHeader{"text/plain", []Param{{"charset", "UTF-8"}, {"foo", "a b"}}, true}, []byte("hi")}},
		{"data:application/octet-stream;base64,aGVs\r\nbG8=", DataURI{DataURIHeader{"application/octet-stream", nil, true}, []byte("hello")}},
		{"data:a/b,%41%62%2c+%e2%82%AC,", DataURI{DataURIHeader{"a/b", nil, false}, []byte("Ab,+€,")}},
		{"data:a/b,raw bytes \xff ok", DataURI{DataURIHeader{"a/b", nil, false}, []byte("raw bytes \xff ok")}},
		{"data:application/vnd.example+json;v=1,{}", DataURI{DataURIHeader{"application/vnd.example+json", []Param{{"v", "1"}}, false}, []byte("{}")}},
		{"data:text/plain;%4Eame%2Dx=v;%25=1,x", DataURI{DataURIHeader{"text/plain", []Param{{"name-x", "v"}, {"%", "1"}}, false}, []byte("x")}}, // escaped names (RFC 2397)
	}
	for _, tt := range tests {
		got, err := ParseDataURI(tt.in)
		if err != nil {
			t.Errorf("ParseDataURI(%q): %v", tt.in, err)
			continue
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("ParseDataURI(%q) = %#v %q, want %#v %q", tt.in, got, got.Data, tt.want, tt.want.Data)
		}
		checkReaderMatches(t, tt.in, rand.New(rand.NewPCG(1, uint64(len(tt.in)))))
	}
}

func TestParseDataURIErrors(t *testing.T) {
	long := "data:text/plain;x=" + strings.Repeat("a", MaxDataURIHeader) + ",x"
	tests := []struct{ in, msg string }{
		{"", `codec: data URI: missing "data:" scheme`},
		{"dat", `codec: data URI: missing "data:" scheme`},
		{"http://example.com/x.png", `codec: data URI: missing "data:" scheme`},
		{" data:,x", `codec: data URI: missing "data:" scheme`},
		{"data:text/plain", `codec: data URI: missing ',' separator`},
		{"data:", `codec: data URI: missing ',' separator`},
		{long, `codec: data URI: header longer than 1024 bytes`},
		{"data:x,abc", `codec: data URI: invalid media type "x"`},
		{"data:image/,abc", `codec: data URI: invalid media type "image/"`},
		{"data:/png,abc", `codec: data URI: invalid media type "/png"`},
		{"data:image png/x,abc", `codec: data URI: invalid media type "image png/x"`},
		{"data:image/png/x,abc", `codec: data URI: invalid media type "image/png/x"`},
		{"data:charset=utf-8,abc", `codec: data URI: invalid media type "charset=utf-8"`},
		{"data:text/plain;base64;x=y,abc", `codec: data URI: invalid parameter "base64"`},
		{"data:text/plain;x,abc", `codec: data URI: invalid parameter "x"`},
		{"data:text/plain;x=,abc", `codec: data URI: invalid parameter "x="`},
		{"data:text/plain;=y,abc", `codec: data URI: invalid parameter "=y"`},
		{"data:text/plain;x=%zz,abc", `codec: data URI: invalid parameter "x=%zz"`},
		{"data:text/plain;x=a b,abc", `codec: data URI: invalid parameter "x=a b"`},
		{"data:text/plain;;base64,abc", `codec: data URI: invalid parameter ""`},
		{"data:image/png;base64,iVBO!w0KGgo=", `codec: data URI: bad base64 at byte 4`},
		{"data:image/png;base64,iV\nBO!w0KGgo=", `codec: data URI: bad base64 at byte 4`},
		{"data:image/png;base64,iVBORw0KGgo=iVBO", `codec: data URI: bad base64 at byte 12`},
		{"data:image/png;base64,iVBORw0KGgo", `codec: data URI: truncated base64 at byte 8`},
		{"data:image/png;base64,iVBORw0KGg=", `codec: data URI: truncated base64 at byte 8`},
		{"data:image/png;base64,iVBORw0KGg%3D%3D", `codec: data URI: bad base64 at byte 10 (percent-escapes are not allowed in base64 payloads)`},
		{"data:image/png;base64,iVBO Rw0K", `codec: data URI: bad base64 at byte 4`},
		{"data:text/plain,ab%2", `codec: data URI: bad percent-escape at byte 2`},
		{"data:text/plain,ab%", `codec: data URI: bad percent-escape at byte 2`},
		{"data:text/plain,%41%g1", `codec: data URI: bad percent-escape at byte 3`},
	}
	for _, tt := range tests {
		_, err := ParseDataURI(tt.in)
		if err == nil || err.Error() != tt.msg {
			t.Errorf("ParseDataURI(%q) error %v, want %s", tt.in, err, tt.msg)
			continue
		}
		var de *DataURIError
		if !errors.As(err, &de) {
			t.Errorf("ParseDataURI(%q): %T is not a *DataURIError", tt.in, err)
		}
		if strings.Contains(tt.msg, "scheme") != errors.Is(err, ErrNotDataURI) {
			t.Errorf("ParseDataURI(%q): errors.Is(ErrNotDataURI) wrong", tt.in)
		}
		var c base64.CorruptInputError
		if strings.Contains(tt.msg, "bad base64") && !errors.As(err, &c) {
			t.Errorf("ParseDataURI(%q): no CorruptInputError inside", tt.in)
		}
		checkReaderMatches(t, tt.in, rand.New(rand.NewPCG(2, uint64(len(tt.in)))))
	}
}

// checkReaderMatches decodes s with NewDataURIReader through random reads
// and checks the result is ParseDataURI's.
func checkReaderMatches(tb testing.TB, s string, rnd *rand.Rand) {
	tb.Helper()
	want, werr := ParseDataURI(s)
	for i, src := range []io.Reader{
		strings.NewReader(s),
		iotest.OneByteReader(strings.NewReader(s)),
		&chunkReader{b: []byte(s), r: rnd, max: 1 + rnd.IntN(300), eofWithData: rnd.IntN(2) == 0},
	} {
		r, err := NewDataURIReader(src)
		var got []byte
		if err == nil {
			if werr == nil && r.Header.String() != want.DataURIHeader.String() {
				tb.Fatalf("reader %d: header %q, ParseDataURI %q", i, r.Header.String(), want.DataURIHeader.String())
			}
			if i == 2 {
				var buf bytes.Buffer
				_, err = io.Copy(&buf, r)
				got = buf.Bytes()
			} else {
				got, err = readSized(r, rnd, []int{1, 2, 3, 5, 100, 4096})
			}
		}
		if fmt.Sprint(err) != fmt.Sprint(werr) {
			tb.Fatalf("reader %d: NewDataURIReader(%q) error %v, ParseDataURI %v", i, RedactDataURI(s), err, werr)
		}
		if werr == nil && !bytes.Equal(got, want.Data) {
			tb.Fatalf("reader %d: payload %q, ParseDataURI %q", i, got, want.Data)
		}
	}
}

func TestDataURIReaderEarlyHeader(t *testing.T) {
	// The header is available before the payload has arrived.
	pr, pw := io.Pipe()
	go pw.Write([]byte("data:image/png;base64,"))
	r, err := NewDataURIReader(pr)
	if err != nil {
		t.Fatal(err)
	}
	if r.Header.MediaType != "image/png" || !r.Header.Base64 {
		t.Fatalf("header %+v", r.Header)
	}
	if !MatchAccept([]string{"image/*"}, r.Header.MediaType) {
		t.Fatal("image/png not accepted by image/*")
	}
	go func() {
		pw.Write([]byte("aGVsbG8="))
		pw.Close()
	}()
	got, err := io.ReadAll(r)
	if string(got) != "hello" || err != nil {
		t.Fatalf("payload %q, %v", got, err)
	}
}

func TestDataURIReaderErrors(t *testing.T) {
	boom := errors.New("boom")
	_, err := NewDataURIReader(io.MultiReader(strings.NewReader("data:image/png"), iotest.ErrReader(boom)))
	if !errors.Is(err, boom) {
		t.Errorf("header read error: %v", err)
	}
	// The scheme is checked as soon as five bytes are in, without waiting.
	_, err = NewDataURIReader(io.MultiReader(strings.NewReader("http:"), iotest.ErrReader(boom)))
	if !errors.Is(err, ErrNotDataURI) {
		t.Errorf("early scheme check: %v", err)
	}
	for _, b64 := range []bool{false, true} {
		hdr := "data:text/plain,abc"
		if b64 {
			hdr = "data:text/plain;base64,aGVsbG8g"
		}
		r, err := NewDataURIReader(io.MultiReader(strings.NewReader(hdr), iotest.ErrReader(boom)))
		if err != nil {
			t.Fatal(err)
		}
		_, err = io.ReadAll(r)
		if err != boom {
			t.Errorf("base64=%v: payload read error %v, want boom itself", b64, err)
		}
	}
}

func TestFormatDataURI(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	for _, n := range []int{0, 1, 2, 3, 3071, 3072, 3073, 100000} {
		data := randBytes(r, n)
		s := FormatDataURI("image/png", data)
		want := "data:image/png;base64," + base64.StdEncoding.EncodeToString(data)
		if s != want {
			t.Fatalf("FormatDataURI(%d bytes) mismatch", n)
		}
		d, err := ParseDataURI(s)
		if err != nil || d.MediaType != "image/png" || !bytes.Equal(d.Data, data) {
			t.Fatalf("round trip of %d bytes: %v", n, err)
		}
		var buf bytes.Buffer
		w := NewDataURIWriter(&buf, "image/png")
		io.Copy(w, bytes.NewReader(data))
		if err := w.Close(); err != nil || buf.String() != want {
			t.Fatalf("NewDataURIWriter(%d bytes) mismatch, %v", n, err)
		}
	}
	if got := FormatDataURI("", []byte("hi")); got != "data:application/octet-stream;base64,aGk=" {
		t.Errorf("FormatDataURI with no media type: %q", got)
	}
	var buf bytes.Buffer
	NewDataURIWriter(&buf, "").Close()
	if buf.String() != "data:application/octet-stream;base64," {
		t.Errorf("empty NewDataURIWriter: %q", buf.String())
	}
}

func TestRedactDataURI(t *testing.T) {
	tests := []struct{ in, want string }{
		{"data:image/png;base64,iVBORw0KGgo=", "data:image/png;base64,[8 bytes]"},
		{"DATA:Image/PNG;BASE64,iVBORw0KGgo=", "data:image/png;base64,[8 bytes]"},
		{"data:image/png;base64,iVBORw0K\r\nGgo=", "data:image/png;base64,[8 bytes]"},
		{"data:,hello%20world", "data:text/plain;charset=US-ASCII,[11 bytes]"},
		{"data:text/plain;name=a%0Ab,secret", "data:text/plain;name=a%0Ab,[6 bytes]"},
		{"data:secret-without-comma", "data:[20 bytes]"},
		{"data:bad type,secret", "data:[invalid header],[6 bytes]"},
		{"https://example.com/", "https://example.com/"},
	}
	for _, tt := range tests {
		if got := RedactDataURI(tt.in); got != tt.want {
			t.Errorf("RedactDataURI(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	d, _ := ParseDataURI("data:image/png;base64,c2VjcmV0")
	for _, s := range []string{d.String(), fmt.Sprint(d), fmt.Sprintf("%v %+v %#v %s", d, d, d, d)} {
		if strings.Contains(s, "secret") || strings.Contains(s, "c2VjcmV0") || strings.Contains(s, "115") {
			t.Errorf("formatted DataURI leaks the payload: %s", s)
		}
	}
	if got := d.String(); got != "data:image/png;base64,[6 bytes]" {
		t.Errorf("DataURI.String() = %q", got)
	}
}

func TestMatchAccept(t *testing.T) {
	tests := []struct {
		accept []string
		mt     string
		want   bool
	}{
		{nil, "image/png", true},
		{[]string{}, "application/x-anything", true},
		{[]string{".pdf"}, "image/png", true},
		{[]string{".pdf", "application/pdf"}, "image/png", false},
		{[]string{".pdf", "application/pdf"}, "application/pdf", true},
		{[]string{"image/png"}, "image/png", true},
		{[]string{"image/png"}, "IMAGE/PNG", true},
		{[]string{"Image/PNG"}, "image/png", true},
		{[]string{"image/png"}, "image/png; charset=binary", true},
		{[]string{"text/plain;charset=utf-8"}, "text/plain;charset=US-ASCII", true},
		{[]string{"image/png"}, "image/jpeg", false},
		{[]string{"image/*"}, "image/jpeg", true},
		{[]string{"image/*"}, "IMAGE/webp", true},
		{[]string{"image/*"}, "video/mp4", false},
		{[]string{"*/*"}, "video/mp4", true},
		{[]string{"*/*"}, "", true},
		{[]string{"image/png"}, "", false},
		{[]string{"image/png"}, "image", false},
		{[]string{"image"}, "image/png", false},
		{[]string{"*"}, "image/png", false},
		{[]string{" image/png "}, "image/png", true},
		{[]string{"application/json", "text/*"}, "text/csv", true},
	}
	for _, tt := range tests {
		if got := MatchAccept(tt.accept, tt.mt); got != tt.want {
			t.Errorf("MatchAccept(%q, %q) = %v, want %v", tt.accept, tt.mt, got, tt.want)
		}
	}
}
