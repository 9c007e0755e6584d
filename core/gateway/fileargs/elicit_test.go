package fileargs

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// fakeResolver opens "C:<orig>" carriers: the original is <orig> (raw
// JSON), the form's file field "doc" a PDF up to 16 bytes.
func fakeResolver(raw []byte) ([]byte, map[string]Spec, bool) {
	s := string(raw)
	if !strings.HasPrefix(s, `"C:`) {
		return nil, nil, false
	}
	orig := strings.ReplaceAll(strings.TrimSuffix(strings.TrimPrefix(s, `"C:`), `"`), `\"`, `"`)
	return []byte(orig), map[string]Spec{"doc": {Accept: []string{"application/pdf"}, MaxSize: 16}}, true
}

// feedAll walks msg in chunks of size: what is forwarded, and the error.
func feedAll(form Form, msg string, size int) (string, error) {
	e := NewElicit(form, fakeResolver)
	var out bytes.Buffer
	for i := 0; i < len(msg); i += size {
		b, err := e.Feed([]byte(msg[i:min(i+size, len(msg))]))
		if err != nil {
			return out.String(), err
		}
		out.Write(b)
	}
	b, err := e.End()
	out.Write(b)
	return out.String(), err
}

func pdfURI(n int) string {
	return "data:application/pdf;base64," + base64.StdEncoding.EncodeToString(append([]byte("%PDF-1.7\n"), bytes.Repeat([]byte{'x'}, n-9)...))
}

// The carrier comes back as the original, padded to its length; every
// other byte passes as it was; good files pass; a bad one is refused
// naming its field (and its input key), whether the id came before the
// content or after it, in any chunking.
func TestElicitCarriersAndFields(t *testing.T) {
	small, big := pdfURI(12), pdfURI(40)
	png := "data:application/pdf;base64," + base64.StdEncoding.EncodeToString([]byte("\x89PNG\r\n\x1a\n0000"))
	cases := []struct {
		name, msg, want, refused string
		form                     Form
	}{
		{"id first", `{"jsonrpc":"2.0","id":"C:7","result":{"action":"accept","content":{"doc":"` + small + `","n":"x"}}}`,
			`{"jsonrpc":"2.0","id":7    ,"result":{"action":"accept","content":{"doc":"` + small + `","n":"x"}}}`, "", FormResponse},
		{"id last", `{"result":{"content":{"doc":"` + small + `"},"action":"accept"},"jsonrpc":"2.0","id":"C:\"a\""}`,
			`{"result":{"content":{"doc":"` + small + `"},"action":"accept"},"jsonrpc":"2.0","id":"a"      }`, "", FormResponse},
		{"not ours", `{"result":{"content":{"doc":"` + big + `"}},"id":"D:1"}`, `{"result":{"content":{"doc":"` + big + `"}},"id":"D:1"}`, "", FormResponse},
		{"id first, too big", `{"id":"C:7","result":{"content":{"doc":"` + big + `"}}}`, "", `field "doc": file is larger than maxSize 16 bytes`, FormResponse},
		{"id last, too big", `{"result":{"content":{"doc":"` + big + `"}},"id":"C:7"}`, "", `field "doc": file is larger than maxSize 16 bytes`, FormResponse},
		{"id last, wrong type", `{"result":{"content":{"doc":"` + png + `"}},"id":"C:7"}`, "", `field "doc": content is image/png, which is not accepted (accept: application/pdf)`, FormResponse},
		{"retry", `{"id":2,"method":"tools/call","params":{"name":"t","inputResponses":{"C:\"k\"":{"action":"accept","content":{"doc":"` + small + `"}}},"requestState":"s"}}`,
			`{"id":2,"method":"tools/call","params":{"name":"t","inputResponses":{"k"      :{"action":"accept","content":{"doc":"` + small + `"}}},"requestState":"s"}}`, "", FormRetry},
		{"retry, wrong type", `{"params":{"inputResponses":{"other":{"content":{"doc":"x"}},"C:\"k\"":{"content":{"doc":"data:text/plain,hi"}}}}}`, "",
			`input "k", field "doc": media type "text/plain" is not accepted (accept: application/pdf)`, FormRetry},
	}
	for _, c := range cases {
		for size := 1; size <= len(c.msg); size++ {
			out, err := feedAll(c.form, c.msg, size)
			var ref *FieldRefusal
			switch {
			case c.refused == "" && (err != nil || out != c.want):
				t.Fatalf("%s, chunks of %d: forwarded %q (%v); want %q", c.name, size, out, err, c.want)
			case c.refused != "" && (!errors.As(err, &ref) || ref.Error() != c.refused):
				t.Fatalf("%s, chunks of %d: %v; want the refusal %s", c.name, size, err, c.refused)
			case c.refused != "" && (strings.Contains(out, "C:") || len(out) > len(c.msg)-4):
				t.Fatalf("%s, chunks of %d: the message's end was forwarded: %q", c.name, size, out)
			}
		}
	}
}

// A hostile answer with its id last and many content values keeps at most
// maxPendingFacts facts, and measures no value that is not a data URI.
func TestElicitPendingBounded(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"result":{"content":{`)
	for i := range 20000 {
		fmt.Fprintf(&b, `"t%d":"plain text","f%d":"data:,x",`, i, i)
	}
	b.WriteString(`"doc":"` + pdfURI(40) + `"}},"id":"C:1"}`)
	e := NewElicit(FormResponse, fakeResolver)
	msg := b.String()
	for i := 0; i < len(msg); i += 4096 {
		if _, err := e.Feed([]byte(msg[i:min(i+4096, len(msg))])); err != nil {
			t.Fatalf("refused %v; want the doc (past the bound) unmeasured", err)
		}
		if len(e.pending) > maxPendingFacts {
			t.Fatalf("%d facts pending; bound %d", len(e.pending), maxPendingFacts)
		}
	}
}
