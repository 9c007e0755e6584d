package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/mcpblob/mcpblob/storage"
)

func newReaderServer(t *testing.T) *Server {
	t.Helper()
	s, err := NewServer(Options{Backend: nopBackend{}, MaxBodyBytes: 1 << 20, MaxFileBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// nopBackend discards writes.
type nopBackend struct{ storage.Backend }

func (nopBackend) Create(context.Context, string, storage.CreateOptions) (storage.Writer, error) {
	return &nopWriter{}, nil
}

type nopWriter struct{ n int64 }

func (w *nopWriter) Write(p []byte) (int, error) { w.n += int64(len(p)); return len(p), nil }
func (w *nopWriter) Written() int64              { return w.n }
func (w *nopWriter) Commit(context.Context) (storage.Info, error) {
	return storage.Info{Size: w.n}, nil
}
func (w *nopWriter) Abort(context.Context) error { return nil }

// TestReadMessageEquivalent: a message without large strings comes out of
// the scanner meaning exactly what encoding/json reads, whatever the
// escapes, and however the body is split into reads.
func TestReadMessageEquivalent(t *testing.T) {
	s := newReaderServer(t)
	cases := []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"a":"b\/c\u002Fd","n":[1,2.5e3,-0,true,false,null],"o":{}}}}`,
		`  {"params":{"s":"\"\\\b\f\n\r\t\u00e9\ud83d\ude00\ud800x"},"method":"m","id":"i","jsonrpc":"2.0"}  `,
		`{"a":[],"b":[[]],"c":{"d":{"e":"é😀"}}}`,
	}
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 200; i++ {
		var sb strings.Builder
		for j := 0; j < r.IntN(300); j++ {
			switch r.IntN(6) {
			case 0:
				sb.WriteString(`\"`)
			case 1:
				sb.WriteString(`\u00`)
				sb.WriteString([]string{"41", "e9", "2F", "0a"}[r.IntN(4)])
			case 2:
				sb.WriteString(`\/`)
			case 3:
				sb.WriteString("ü")
			default:
				sb.WriteByte(byte('a' + r.IntN(26)))
			}
		}
		cases = append(cases, `{"jsonrpc":"2.0","id":`+string(jsonInt(int64(i)))+`,"method":"x","params":{"k":"`+sb.String()+`"}}`)
	}
	for _, in := range cases {
		for _, split := range []func(io.Reader) io.Reader{func(r io.Reader) io.Reader { return r }, iotest.OneByteReader, iotest.HalfReader} {
			out, files, err := s.readMessage(split(strings.NewReader(in)), nil, nil)
			files.release()
			if err != nil {
				t.Fatalf("%s: %v", in, err)
			}
			var want, got any
			if err := json.Unmarshal([]byte(in), &want); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(out, &got); err != nil {
				t.Fatalf("rebuilt message is not JSON: %v\n%s", err, out)
			}
			if !reflect.DeepEqual(want, got) {
				t.Fatalf("in  %s\nout %s", in, out)
			}
		}
	}
}

func TestReadMessageErrors(t *testing.T) {
	s := newReaderServer(t)
	for _, in := range []string{
		`{"a":"unterminated`, `{"a":"bad \x escape"}`, "{\"a\":\"ctl\x01\"}", `{"a" 1}`, `{"a":1,}x`,
		`{"a":1} {"b":2}`, `{"a":` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + `}`,
	} {
		if _, files, err := s.readMessage(strings.NewReader(in), nil, nil); err == nil {
			files.release()
			t.Errorf("%q: no error", in)
		}
	}
	// Large non-data strings count against MaxBodyBytes.
	big := `{"params":{"a":"` + strings.Repeat("x", 2<<20) + `"}}`
	if _, files, err := s.readMessage(strings.NewReader(big), nil, nil); err != errTooLarge {
		t.Errorf("2 MiB string: %v", err)
	} else {
		files.release()
	}
}

// TestReadMessageSpools: a long string is spooled (raw) and a long data URI
// decoded into a spool, in any position; the message keeps "" in their place.
func TestReadMessageSpools(t *testing.T) {
	s := newReaderServer(t)
	long := strings.Repeat("ab", 50<<10)
	payload := bytes.Repeat([]byte{0, 1, 2, 250}, 40<<10)
	uri := "data:application/octet-stream;base64," + base64Std(payload)
	in := `{"params":{"arguments":{"f":"` + strings.ReplaceAll(uri, "/", `\/`) + `"},"x":["` + long + `"]},"jsonrpc":"2.0","id":1,"method":"tools/call"}`
	out, files, err := s.readMessage(iotest.HalfReader(strings.NewReader(in)), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer files.release()
	if want := `{"params":{"arguments":{"f":""},"x":[""]},"jsonrpc":"2.0","id":1,"method":"tools/call"}`; string(out) != want {
		t.Fatalf("rebuilt %s", out)
	}
	fa := files.get("/params/arguments/f")
	if fa == nil || fa.problem != "" || fa.spool == nil || fa.size != int64(len(payload)) || fa.header.MediaType != "application/octet-stream" {
		t.Fatalf("data URI: %+v", fa)
	}
	got, _ := io.ReadAll(fa.spool)
	if !bytes.Equal(got, payload) {
		t.Fatal("decoded spool differs")
	}
	raw := files.get("/params/x/0")
	if raw == nil || !raw.raw || raw.size != int64(len(long)) {
		t.Fatalf("raw spool: %+v", raw)
	}
	got, _ = io.ReadAll(raw.spool)
	if string(got) != long {
		t.Fatal("raw spool differs")
	}
}

func base64Std(b []byte) string {
	var sb strings.Builder
	enc := json.NewEncoder(&sb)
	_ = enc.Encode(b) // encoding/json writes []byte as standard base64
	return strings.Trim(strings.TrimSpace(sb.String()), `"`)
}

func TestSniff(t *testing.T) {
	for _, tc := range []struct {
		declared, head, want string
	}{
		{"image/png", "\x89PNG\r\n\x1a\nxxxx", ""},
		{"image/jpg", "\xff\xd8\xff\xe0", ""},
		{"image/png", "GIF89a", `content is image/gif, not the declared media type "image/png"`},
		{"application/pdf", "hello", `content does not match the declared media type "application/pdf"`},
		{"text/plain", "%PDF-1.7", `content is application/pdf, not the declared media type "text/plain"`},
		{"application/vnd.openxmlformats-officedocument.wordprocessingml.document", "PK\x03\x04", ""},
		{"image/webp", "RIFF\x00\x00\x00\x00WEBPVP8 ", ""},
		{"application/octet-stream", "anything", ""},
	} {
		if got := SniffProblem(tc.declared, []byte(tc.head)); got != tc.want {
			t.Errorf("%s / %q: %q, want %q", tc.declared, tc.head, got, tc.want)
		}
	}
}

// TestReadMessageExpected: the answer to a form elicitation is bounded by
// its field's maxSize while it arrives.
func TestReadMessageExpected(t *testing.T) {
	s := newReaderServer(t)
	in := `{"jsonrpc":"2.0","id":5,"result":{"action":"accept","content":{"file":"data:text/plain;base64,` + base64Std(bytes.Repeat([]byte("y"), 100<<10)) + `"}}}`
	expect := func(id []byte) map[string]fileSpec {
		if string(id) == "5" {
			return map[string]fileSpec{"file": {MaxSize: 1000}}
		}
		return nil
	}
	_, files, err := s.readMessage(strings.NewReader(in), expect, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer files.release()
	fa := files.get("/result/content/file")
	if fa == nil || fa.problem != "file is larger than maxSize 1000 bytes" || fa.spool != nil {
		t.Fatalf("%+v", fa)
	}
}

// FuzzReadMessage: the scanner never panics or hangs, and any valid JSON
// object it is given comes out meaning the same (strings it takes out of
// the message aside).
func FuzzReadMessage(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"upload_file","arguments":{"key":"k","file":"data:text/plain,hi"}}}`,
		`{"params":{"arguments":{"file":"data:text\/plain;base64,aGk="}},"method":"tools/call"}`,
		`{"a":"\ud83d\ude00\u002F","b":[1,{"c":null}]}`, `[1]`, `{"a":tru}`, `{"a":"\u12"}`,
	} {
		f.Add(seed)
	}
	s, err := NewServer(Options{Backend: nopBackend{}, MaxBodyBytes: 1 << 16, MaxFileBytes: 1 << 16, SpoolDir: f.TempDir()})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, in string) {
		out, files, err := s.readMessage(iotest.HalfReader(strings.NewReader(in)), nil, nil)
		diverted := len(files.m) > 0 // strings taken out read as ""
		files.release()
		trimmed := strings.TrimSpace(in)
		isObj := strings.HasPrefix(trimmed, "{")
		// Literals are copied unchecked (parseMessage rejects bad ones), so
		// only valid input must come out valid.
		if err == nil && isObj && !json.Valid(out) && json.Valid([]byte(in)) {
			t.Fatalf("accepted %q but rebuilt invalid JSON %q", in, out)
		}
		if isObj && json.Valid([]byte(in)) && len(in) < 4096 && !diverted {
			if err != nil {
				t.Fatalf("valid %q: %v", in, err)
			}
			var want, got any
			json.Unmarshal([]byte(in), &want)
			json.Unmarshal(out, &got)
			if !reflect.DeepEqual(want, got) {
				t.Fatalf("in  %q\nout %q", in, out)
			}
		}
	})
}

// TestReadMessageState: a 2026-07-28 retry whose requestState precedes its
// inputResponses has the form's maxSize applied while the answer arrives.
func TestReadMessageState(t *testing.T) {
	s := newReaderServer(t)
	c := &call{method: "tools/call", principal: "p", params: map[string]json.RawMessage{"name": json.RawMessage(`"request_upload"`)}}
	res, err := s.inputRequired(c, nil, json.RawMessage(`{"mode":"form","id":"u1","max":1000}`))
	if err != nil {
		t.Fatal(err)
	}
	in := `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"request_upload","requestState":"` + res["requestState"].(string) +
		`","inputResponses":{"upload":{"action":"accept","content":{"file":"data:text/plain;base64,` + base64Std(bytes.Repeat([]byte("y"), 100<<10)) + `"}}}}}`
	for _, principal := range []string{"p", "someone else"} {
		_, files, err := s.readMessage(strings.NewReader(in), nil, func(method, name, state string) map[string]fileSpec {
			return s.stateFiles(principal, method, name, state)
		})
		if err != nil {
			t.Fatal(err)
		}
		fa := files.get("/params/inputResponses/upload/content/file")
		want := ""
		if principal == "p" {
			want = "file is larger than maxSize 1000 bytes"
		}
		if fa == nil || fa.problem != want {
			t.Fatalf("%s: %+v", principal, fa)
		}
		files.release()
	}
}
