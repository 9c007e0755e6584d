package blobdecode

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
)

// FuzzDecodeJSON: Decode never panics; whatever it accepts, encoding/json
// and encoding/base64 read the same way (bytes, uri, mimeType, kind); and
// it accepts every answer they read that the protocol allows (id 1,
// jsonrpc "2.0", no member given twice, no method, no error, string
// members, nesting within 64).
func FuzzDecodeJSON(f *testing.F) {
	for _, seed := range []string{
		answer(`"uri":"u","mimeType":"image/png","blob":"aGVsbG8="`),
		answer(`"blob":"aGV\/sb\u0047\n8="`), answer(`"text":"h\u00e9\ud83d\ude00\ud800 \xff"`),
		`{"result":{"contents":[{"blob":"eA==","mimeType":"m"},{"text":"x"}]},"id":1,"jsonrpc":"2.0"}`,
		`{"jsonrpc":"2.0","id":1,"error":{"code":-1,"message":"m"}}`, answer(`"blob":"eA=","blob":"eA=="`),
		answer(`"blob":null,"text":"t"`), `{"jsonrpc":"2.0","id":1,"result":{"contents":[]}}`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, body string) {
		var out bytes.Buffer
		res, err := Decode(iotest.HalfReader(strings.NewReader(body)), jsonType, []byte("1"), &out, Options{})
		checkAgainstReference(t, body, []byte(body), out.Bytes(), res, err)
	})
}

// FuzzDecodeSSE: the same over a text/event-stream body, whose answer is
// the first event (of type message, with data that is not blank) whose
// message has no method.
func FuzzDecodeSSE(f *testing.F) {
	msg := answer(`"uri":"u","blob":"aGVsbG8="`)
	for _, seed := range []string{
		sseEvent(msg), "id: 1\ndata:\n\n" + sseEvent(`{"jsonrpc":"2.0","method":"n"}`) + sseEvent(msg),
		strings.ReplaceAll(sseEvent(msg), "\n", "\r\n"), strings.ReplaceAll(sseEvent(msg), "\n", "\r"),
		"data: " + msg[:17] + "\ndata:" + msg[17:] + "\n\n", ": c\nevent: x\ndata: y\n\n" + sseEvent(msg),
		"data: " + msg + "\n", "data\n\ndata: " + msg + "\nevent: x\n\n",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, body string) {
		var out bytes.Buffer
		res, err := Decode(iotest.HalfReader(strings.NewReader(body)), sseType, []byte("1"), &out, Options{})
		answer, found := refAnswerEvent(body)
		if !found {
			if err == nil {
				t.Fatalf("%q: accepted, but the reference finds no answer", body)
			}
			return
		}
		checkAgainstReference(t, body, []byte(answer), out.Bytes(), res, err)
	})
}

// refAnswerEvent is the data of the event that answers, as the reference
// reads the stream; false when no event answers or one before it is not
// JSON.
func refAnswerEvent(body string) (string, bool) {
	for _, ev := range refEvents(body) {
		if strings.Trim(ev, " \t\r\n") == "" {
			continue
		}
		var a refAnswer
		if json.Unmarshal([]byte(ev), &a) != nil {
			return "", false
		}
		if a.Method == nil {
			return ev, true
		}
	}
	return "", false
}

// checkAgainstReference holds Decode's outcome on body (whose answer is
// msg) against the reference.
func checkAgainstReference(t *testing.T, body string, msg, out []byte, res Result, err error) {
	t.Helper()
	if err == nil {
		want, h, ok := refContent(msg)
		if !ok {
			t.Fatalf("%q: accepted, but the reference reads no content", body)
		}
		if !bytes.Equal(out, want) || res.Header != h {
			t.Fatalf("%q: got %q %+v, the reference %q %+v", body, out, res.Header, want, h)
		}
		return
	}
	if !Upstream(err) {
		t.Fatalf("%q: %v is not the upstream's fault?", body, err)
	}
	var limit *LimitError
	if _, _, ok := refContent(msg); ok && strict(msg) && !errors.As(err, &limit) && !errors.Is(err, ErrTruncated) {
		t.Fatalf("%q: refused (%v), but the reference reads it", body, err)
	}
}

// strict reports whether msg is an answer the protocol allows, beyond
// what encoding/json checks: see FuzzDecodeJSON. Member names are exact
// (encoding/json would also take "Contents" for contents).
func strict(msg []byte) bool {
	var top, result map[string]json.RawMessage
	var contents []map[string]json.RawMessage
	if json.Unmarshal(msg, &top) != nil || string(top["jsonrpc"]) != `"2.0"` || string(top["id"]) != "1" ||
		top["method"] != nil || top["error"] != nil || repeatsOrDeep(msg) ||
		json.Unmarshal(top["result"], &result) != nil || json.Unmarshal(result["contents"], &contents) != nil || len(contents) == 0 {
		return false
	}
	names := []string{"jsonrpc", "id", "method", "error", "result", "contents", "uri", "mimetype", "blob", "text"}
	for _, m := range []map[string]json.RawMessage{top, result, contents[0]} {
		for k := range m {
			if slices.Contains(names, strings.ToLower(k)) && !slices.Contains(names, k) && k != "mimeType" {
				return false
			}
		}
	}
	for _, k := range []string{"uri", "mimeType", "blob", "text"} {
		if v, ok := contents[0][k]; ok && (len(v) == 0 || v[0] != '"') {
			return false
		}
	}
	return true
}

// repeatsOrDeep reports a JSON text with a key given twice in an object
// (after unescaping) or nesting deeper than maxDepth.
func repeatsOrDeep(msg []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(msg))
	var stack []map[string]bool // keys of the open objects; nil for arrays
	expectKey := func() bool { return len(stack) > 0 && stack[len(stack)-1] != nil }
	wantKey := true
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return false
		}
		if err != nil {
			return true
		}
		switch v := tok.(type) {
		case json.Delim:
			switch v {
			case '{':
				stack = append(stack, map[string]bool{})
				wantKey = true
			case '[':
				stack = append(stack, nil)
			default:
				stack = stack[:len(stack)-1]
				wantKey = expectKey()
			}
			if len(stack) > maxDepth {
				return true
			}
			continue
		case string:
			if expectKey() && wantKey {
				if stack[len(stack)-1][v] {
					return true
				}
				stack[len(stack)-1][v] = true
				wantKey = false
				continue
			}
		}
		wantKey = expectKey()
	}
}
