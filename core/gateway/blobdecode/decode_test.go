package blobdecode

import (
	"bytes"
	"encoding/base64"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

const (
	jsonType = "application/json"
	sseType  = "text/event-stream"
)

// readers are the ways a body may arrive: whole, a byte at a time, in
// halves of each read.
var readers = map[string]func(io.Reader) io.Reader{
	"whole":   func(r io.Reader) io.Reader { return r },
	"onebyte": iotest.OneByteReader,
	"half":    iotest.HalfReader,
}

// decodeAll runs Decode on body with id 1, recording what Begin saw.
func decodeAll(t *testing.T, body, ctype string, wrap func(io.Reader) io.Reader, opts Options) ([]byte, Result, *Header, error) {
	t.Helper()
	var (
		out   bytes.Buffer
		begun *Header
	)
	opts.Begin = func(h Header) error {
		if begun != nil {
			t.Fatal("Begin called twice")
		}
		if out.Len() != 0 {
			t.Fatal("bytes written before Begin")
		}
		begun = &h
		return nil
	}
	res, err := Decode(wrap(strings.NewReader(body)), ctype, []byte("1"), &out, opts)
	if res.Written != int64(out.Len()) {
		t.Fatalf("Written %d, %d bytes written", res.Written, out.Len())
	}
	return out.Bytes(), res, begun, err
}

// TestDecodeJSON: valid answers in application/json come out as
// encoding/json and encoding/base64 read them, however they are split.
func TestDecodeJSON(t *testing.T) {
	blob := b64("hello, world?>>??")
	cases := map[string]string{
		"blob":           answer(`"uri":"file:///a","mimeType":"image/png","blob":"` + blob + `"`),
		"escaped slash":  answer(`"blob":"` + strings.ReplaceAll(blob, "/", `\/`) + `"`),
		"unicode escape": answer(`"blob":"` + strings.ReplaceAll(strings.ReplaceAll(blob, "+", `\u002B`), "A", `\u0041`) + `"`),
		"wrapped lines":  answer(`"blob":"` + blob[:4] + `\n` + blob[4:8] + `\r\n` + blob[8:] + `\n"`),
		"empty blob":     answer(`"uri":"u","blob":""`),
		"whitespace":     " \r\n\t{ \"jsonrpc\" :\t\"2.0\" ,\n\"id\"\r: 1 , \"result\" : { \"contents\" : [ { \"blob\" : \"" + blob + "\" , \"uri\" : \"u\" } ] } } \n",
		"member order":   `{"result":{"_meta":{"x":[1,{"y":null}]},"contents":[{"mimeType":"text/plain","text":"x","uri":"u"}]},"id":1,"jsonrpc":"2.0"}`,
		"late mimeType":  answer(`"blob":"` + blob + `","mimeType":"image/png"`),
		"text escapes":   answer(`"text":"a\"b\\c\/d\b\f\n\r\t\u00e9\ud83d\ude00\ud800x\u0000"`),
		"text raw utf8":  answer(`"text":"héllo 😀 ` + "\xff\xe2\x82" + `"`),
		"several":        `{"jsonrpc":"2.0","id":1,"result":{"contents":[{"text":"one"},{"blob":"dHdv"},{"text":"three"}]}}`,
		"other members":  answer(`"annotations":{"audience":["user"]},"_meta":{"blob":"x"},"size":12,"blob":"` + blob + `"`),
		"id 1.0":         `{"jsonrpc":"2.0","id":1,"result":{"contents":[{"blob":"eA=="}]}}`,
	}
	for name, body := range cases {
		want, wantH, ok := refContent([]byte(body))
		if !ok {
			t.Fatalf("%s: the reference finds no content", name)
		}
		for rname, wrap := range readers {
			t.Run(name+"/"+rname, func(t *testing.T) {
				got, res, begun, err := decodeAll(t, body, jsonType+"; charset=utf-8", wrap, Options{})
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, want) {
					t.Fatalf("got %q, want %q", got, want)
				}
				if res.Header != wantH {
					t.Fatalf("header %+v, want %+v", res.Header, wantH)
				}
				if begun == nil || begun.Kind != wantH.Kind {
					t.Fatalf("Begin saw %+v", begun)
				}
			})
		}
	}
}

// TestDecodeSSE: the answer is found among other events however the
// stream frames them, and comes out as the reference reads it.
func TestDecodeSSE(t *testing.T) {
	msg := answer(`"uri":"u","mimeType":"application/pdf","blob":"` + b64("%PDF-1.7 some bytes") + `"`)
	progress := `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}`
	request := `{"jsonrpc":"2.0","id":1,"method":"sampling/createMessage","params":{"result":{"contents":[{"blob":"eA=="}]}}}`
	cases := map[string]string{
		"alone":            sseEvent(msg),
		"after others":     sseEvent(progress) + sseEvent(request) + sseEvent(msg),
		"priming event":    "id: s-0\nretry: 1000\ndata: \n\n" + sseEvent(msg),
		"CRLF":             strings.ReplaceAll(sseEvent(progress)+sseEvent(msg), "\n", "\r\n"),
		"CR":               strings.ReplaceAll(sseEvent(progress)+sseEvent(msg), "\n", "\r"),
		"no space":         "data:" + msg + "\n\n",
		"comments":         ": keepalive\n\n: x\nevent: message\n: y\ndata: " + msg + "\n\n",
		"split data":       "data: " + msg[:17] + "\ndata: " + msg[17:] + "\n\n",
		"other event type": "event: endpoint\ndata: /x\n\n" + sseEvent(msg),
		"rest ignored":     sseEvent(msg) + "data: not json\n\n",
		"bare data line":   "data\n\n" + sseEvent(msg),
		"id and retry":     "id: 7\nretry: 10\nevent: message\ndata: " + msg + "\nid: 8\n\n",
	}
	for name, body := range cases {
		want, wantH, ok := refSSE(body)
		if !ok {
			t.Fatalf("%s: the reference finds no content", name)
		}
		for rname, wrap := range readers {
			t.Run(name+"/"+rname, func(t *testing.T) {
				got, res, _, err := decodeAll(t, body, sseType, wrap, Options{})
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, want) || res.Header != wantH {
					t.Fatalf("got %q %+v, want %q %+v", got, res.Header, want, wantH)
				}
			})
		}
	}
}

// TestMimeType: a mimeType before the blob reaches Begin; one after it
// reaches only the Result, marked late.
func TestMimeType(t *testing.T) {
	for _, tc := range []struct {
		content         string
		atBegin         string
		late            bool
		wantKind, wantT string
	}{
		{`"mimeType":"image/png","blob":"eA=="`, "image/png", false, "blob", "image/png"},
		{`"blob":"eA==","mimeType":"image/png"`, "", true, "blob", "image/png"},
		{`"uri":"u","text":"x"`, "", false, "text", ""},
	} {
		_, res, begun, err := decodeAll(t, answer(tc.content), jsonType, readers["whole"], Options{})
		if err != nil {
			t.Fatal(err)
		}
		if begun.MimeType != tc.atBegin || res.MimeTypeLate != tc.late || res.MimeType != tc.wantT || res.Kind.String() != tc.wantKind {
			t.Errorf("%s: Begin saw %+v, result %+v", tc.content, begun, res)
		}
	}
}

// TestMore: the entries after the first are counted, not written.
func TestMore(t *testing.T) {
	body := `{"jsonrpc":"2.0","id":1,"result":{"contents":[{"text":"one"},{"blob":"dHdv"},{"text":"three"}]}}`
	got, res, _, err := decodeAll(t, body, jsonType, readers["whole"], Options{})
	if err != nil || string(got) != "one" || res.More != 2 {
		t.Fatalf("got %q, %+v, %v", got, res, err)
	}
}

// TestErrors: each fault of the upstream is its own error, and after one
// nothing more is written: a fault found before the content starts
// writes nothing at all.
func TestErrors(t *testing.T) {
	blob := b64(strings.Repeat("0123456789", 20))
	var (
		rpc     *RPCError
		corrupt *CorruptError
		idErr   *IDError
		format  *FormatError
		limit   *LimitError
	)
	cases := []struct {
		name, ctype, body string
		target            any // an error pointer for errors.As, or a sentinel
		wrote             bool
	}{
		{"rpc error", jsonType, `{"jsonrpc":"2.0","id":1,"error":{"code":-32002,"message":"Resource not found","data":{"uri":"x"}}}`, &rpc, false},
		{"rpc error null id", jsonType, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`, &rpc, false},
		{"not base64", jsonType, answer(`"blob":"` + blob[:40] + `*` + blob[41:] + `"`), &corrupt, true},
		{"base64 cut", jsonType, answer(`"blob":"` + blob[:len(blob)-1] + `"`), &corrupt, true},
		{"space in base64", jsonType, answer(`"blob":"eA== "`), &corrupt, true},
		{"ends early", jsonType, answer(`"blob":"` + blob + `"`)[:60], ErrTruncated, true},
		{"ends early in a key", jsonType, `{"jsonrpc":"2.0","id":1,"res`, ErrTruncated, false},
		{"SSE ends before blank line", sseType, "data: " + answer(`"blob":"eA=="`) + "\n", ErrTruncated, true},
		{"SSE ends before any answer", sseType, sseEvent(`{"jsonrpc":"2.0","method":"x"}`), ErrTruncated, false},
		{"no contents", jsonType, `{"jsonrpc":"2.0","id":1,"result":{}}`, ErrNoContent, false},
		{"empty contents", jsonType, `{"jsonrpc":"2.0","id":1,"result":{"contents":[]}}`, ErrNoContent, false},
		{"no blob or text", jsonType, answer(`"uri":"u","mimeType":"x/y"`), ErrNoContent, false},
		{"wrong id first", jsonType, `{"jsonrpc":"2.0","id":2,"result":{"contents":[{"blob":"eA=="}]}}`, &idErr, false},
		{"wrong id last", jsonType, `{"jsonrpc":"2.0","result":{"contents":[{"blob":"eA=="}]},"id":"1"}`, &idErr, true},
		{"no id", jsonType, `{"jsonrpc":"2.0","result":{"contents":[{"blob":"eA=="}]}}`, &idErr, true},
		{"not JSON", jsonType, `<html>Bad Gateway</html>`, &format, false},
		{"SSE data not JSON", sseType, "data: hello\n\n", &format, false},
		{"SSE data cut", sseType, "data: {\"jsonrpc\":\n\n", &format, false},
		{"other content type", "text/html", answer(`"blob":"eA=="`), &format, false},
		{"batch", jsonType, `[` + answer(`"blob":"eA=="`) + `]`, &format, false},
		{"a request", jsonType, `{"jsonrpc":"2.0","id":1,"method":"ping"}`, &format, false},
		{"no jsonrpc", jsonType, `{"id":1,"result":{"contents":[{"blob":"eA=="}]}}`, &format, true},
		{"blob twice", jsonType, answer(`"blob":"eA==","blob":"eQ=="`), &format, true},
		{"blob and text", jsonType, answer(`"text":"a","blob":"eQ=="`), &format, true},
		{"result and error", jsonType, `{"jsonrpc":"2.0","id":1,"result":{"contents":[{"blob":"eA=="}]},"error":{"code":1,"message":"m"}}`, &format, true},
		{"blob not a string", jsonType, answer(`"blob":["eA=="]`), &format, false},
		{"data after", jsonType, answer(`"blob":"eA=="`) + `{}`, &format, true},
		{"bad escape", jsonType, answer(`"blob":"eA\x="`), &format, true},
		{"control char", jsonType, answer("\"blob\":\"eA\n==\""), &format, true},
		{"long SSE line", sseType, ": " + strings.Repeat("x", 20<<10) + "\n\n" + sseEvent(answer(`"blob":"eA=="`)), &limit, false},
		{"long key", jsonType, `{"` + strings.Repeat("k", 20<<10) + `":1}`, &limit, false},
		{"long uri", jsonType, answer(`"uri":"` + strings.Repeat("u", 20<<10) + `","blob":"eA=="`), &limit, false},
		{"deep", jsonType, `{"jsonrpc":"2.0","x":` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + `}`, &limit, false},
	}
	for _, tc := range cases {
		for rname, wrap := range readers {
			t.Run(tc.name+"/"+rname, func(t *testing.T) {
				got, _, _, err := decodeAll(t, tc.body, tc.ctype, wrap, Options{})
				if err == nil {
					t.Fatalf("no error; wrote %q", got)
				}
				if s, ok := tc.target.(error); ok && !errors.Is(err, s) || !ok && !errors.As(err, tc.target) {
					t.Fatalf("error %v (%T), want %T", err, err, tc.target)
				}
				if !Upstream(err) {
					t.Fatalf("%v: not the upstream's fault?", err)
				}
				if !tc.wrote && len(got) > 0 {
					t.Fatalf("wrote %q before failing with %v", got, err)
				}
			})
		}
	}
	if rpc == nil || rpc.Code != -32700 || rpc.Message != "Parse error" {
		t.Errorf("the upstream's error came out as %+v", rpc)
	}
}

// TestCorruptWritesOnlyGoodBytes: a blob that turns corrupt halfway
// writes the bytes before the bad quantum, then nothing.
func TestCorruptWritesOnlyGoodBytes(t *testing.T) {
	raw := bytes.Repeat([]byte("abcdefghij"), 30000)
	enc := base64.StdEncoding.EncodeToString(raw)
	bad := 200000 // a quantum boundary
	body := answer(`"blob":"` + enc[:bad] + "!!!!" + enc[bad+4:] + `"`)
	got, _, _, err := decodeAll(t, body, jsonType, readers["whole"], Options{})
	var corrupt *CorruptError
	if !errors.As(err, &corrupt) || corrupt.Offset != int64(bad) {
		t.Fatalf("error %v, want a CorruptError at %d", err, bad)
	}
	if !bytes.Equal(got, raw[:len(got)]) || len(got) > bad/4*3 {
		t.Fatalf("wrote %d bytes, the good prefix is %d", len(got), bad/4*3)
	}
}

// TestLimits: MaxContentBytes and MaxOtherBytes stop an answer over them.
func TestLimits(t *testing.T) {
	var limit *LimitError
	_, _, _, err := decodeAll(t, answer(`"blob":"`+b64(strings.Repeat("x", 3000))+`"`), jsonType, readers["whole"], Options{MaxContentBytes: 1000})
	if !errors.As(err, &limit) || limit.What != "content size" {
		t.Fatalf("over MaxContentBytes: %v", err)
	}
	noise := strings.Repeat(sseEvent(`{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"`+strings.Repeat("n", 1000)+`"}}`), 1000)
	_, _, _, err = decodeAll(t, noise+sseEvent(answer(`"blob":"eA=="`)), sseType, readers["whole"], Options{MaxOtherBytes: 100 << 10})
	if !errors.As(err, &limit) || limit.What != "bytes outside the content" {
		t.Fatalf("over MaxOtherBytes: %v", err)
	}
	got, _, _, err := decodeAll(t, noise+sseEvent(answer(`"blob":"eA=="`)), sseType, readers["whole"], Options{})
	if err != nil || string(got) != "x" {
		t.Fatalf("within the default bound: %q, %v", got, err)
	}
}

// TestLongErrorMessageCut: an upstream error's long message is cut, not
// refused.
func TestLongErrorMessageCut(t *testing.T) {
	body := `{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"` + strings.Repeat("m", 100<<10) + `"}}`
	_, _, _, err := decodeAll(t, body, jsonType, readers["whole"], Options{})
	var rpc *RPCError
	if !errors.As(err, &rpc) || rpc.Code != -32603 || len(rpc.Message) != defaultMaxString {
		t.Fatalf("error %v", err)
	}
}

// failWriter fails every write.
type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("client gone") }

// TestNotUpstreamsFault: the destination's failure and Begin's are the
// caller's, and Begin's stops Decode before a byte is written.
func TestNotUpstreamsFault(t *testing.T) {
	body := answer(`"blob":"` + b64("some bytes") + `"`)
	_, err := Decode(strings.NewReader(body), jsonType, []byte("1"), failWriter{}, Options{})
	var we *WriteError
	if !errors.As(err, &we) || Upstream(err) {
		t.Fatalf("a failing writer: %v", err)
	}
	stop := errors.New("no thanks")
	var out bytes.Buffer
	_, err = Decode(strings.NewReader(body), jsonType, []byte("1"), &out, Options{Begin: func(Header) error { return stop }})
	if !errors.Is(err, stop) || Upstream(err) || out.Len() > 0 {
		t.Fatalf("Begin refusing: %v, wrote %d bytes", err, out.Len())
	}
}

// TestIDs: string and number ids match as JSON-RPC compares them.
func TestIDs(t *testing.T) {
	for _, tc := range []struct {
		want, got string
		ok        bool
	}{
		{`1`, `1`, true}, {`"a/b"`, `"a\/b"`, true}, {`"1"`, `1`, false}, {`7`, `7.0`, false},
		{`"x"`, `"y"`, false}, {`12`, `1_2`, false},
	} {
		body := `{"jsonrpc":"2.0","id":` + tc.got + `,"result":{"contents":[{"text":"t"}]}}`
		var out bytes.Buffer
		_, err := Decode(strings.NewReader(body), jsonType, []byte(tc.want), &out, Options{})
		if ok := err == nil; ok != tc.ok {
			t.Errorf("want %s, got %s: %v", tc.want, tc.got, err)
		}
	}
	if _, err := Decode(strings.NewReader(""), jsonType, []byte(`{}`), io.Discard, Options{}); err == nil || Upstream(err) && errors.As(err, new(*FormatError)) {
		t.Errorf("an object as the request id: %v", err)
	}
}
