package wire

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
)

func TestPeekMessage(t *testing.T) {
	for _, c := range []struct {
		body, method, id string
		complete         bool
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, "tools/list", "1", true},
		{` { "params" : {"x":[1,{"y":"}"}]}, "id":"a\"b", "method":"resources/read"}`, "resources/read", `"a\"b"`, true},
		{`{"method":"tools/call","params":{"s":"` + strings.Repeat("x", 100), "tools/call", "", false},
		{`[{"method":"tools/list"}]`, "", "", false},
		{`{"method":"tools\/list"}`, "tools/list", "", true},
		{`{"result":{},"id":7}`, "", "7", true},
	} {
		m, id, complete := PeekMessage([]byte(c.body))
		if m != c.method || string(id) != c.id || complete != c.complete {
			t.Errorf("PeekMessage(%.50q) = %q, %q, %v; want %q, %q, %v", c.body, m, id, complete, c.method, c.id, c.complete)
		}
	}
}

// FuzzPeekMessage: on any bytes PeekMessage returns; on a whole JSON object
// it reports complete and the same top-level method as encoding/json, and
// on any prefix of one never a method that object does not have.
func FuzzPeekMessage(f *testing.F) {
	for _, s := range []string{`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, `{"method":"a","method":"b"}`,
		`{"id":"x","params":{"method":"no"}}`, `{ }`, `{"m":[1,2,{"a":"\u0041"}],"method":"\ud83d\ude00"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		m, _, complete := PeekMessage(b)
		var obj map[string]json.RawMessage
		if json.Unmarshal(b, &obj) != nil || !json.Valid(b) {
			return
		}
		var want string
		if raw, ok := obj["method"]; ok && json.Unmarshal(raw, &want) != nil {
			return // not a string: PeekMessage may keep an earlier value
		}
		if bytes.Count(b, []byte(`"method"`)) > 1 {
			return // duplicates: encoding/json keeps the last, as PeekMessage does, but escapes may hide one
		}
		if !complete || m != want {
			t.Errorf("PeekMessage(%q) = %q, complete %v; encoding/json: method %q", b, m, complete, want)
		}
	})
}

func TestReadEvent(t *testing.T) {
	in := "id: 1\ndata: a\r\ndata: b\n\n: comment\n\ndata: c"
	br := bufio.NewReader(strings.NewReader(in))
	budget := int64(1 << 10)
	raw, data, err := ReadEvent(br, &budget)
	if err != nil || string(raw) != "id: 1\ndata: a\r\ndata: b\n\n" || string(data) != "a\nb" {
		t.Fatalf("first event: %q, data %q, %v", raw, data, err)
	}
	if raw, data, err = ReadEvent(br, &budget); err != nil || string(raw) != ": comment\n\n" || data != nil {
		t.Fatalf("comment event: %q, data %q, %v", raw, data, err)
	}
	if _, _, err = ReadEvent(br, &budget); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("an event cut off: %v, want io.ErrUnexpectedEOF", err)
	}
	small := int64(4)
	if _, _, err = ReadEvent(bufio.NewReader(strings.NewReader("data: 12345\n\n")), &small); !errors.Is(err, ErrOverBounds) {
		t.Fatalf("over the budget: %v, want ErrOverBounds", err)
	}
	if got := string(ReplaceData([]byte("id: 1\ndata: a\r\ndata: b\n\n"), []byte("x"))); got != "id: 1\ndata: x\n\n" {
		t.Errorf("ReplaceData: %q", got)
	}
}

// FuzzReadEvent: the events read, raw, are the stream's bytes in order, and
// no more than the budget is taken.
func FuzzReadEvent(f *testing.F) {
	for _, s := range []string{"data: a\n\n", "event: x\r\ndata: 1\r\ndata: 2\r\n\r\n: c\n\n", "data: cut", "\n\n\n"} {
		f.Add([]byte(s), int64(64))
	}
	f.Fuzz(func(t *testing.T, b []byte, budget int64) {
		budget = max(0, min(budget, 1<<20))
		left := budget
		br := bufio.NewReaderSize(bytes.NewReader(b), 16)
		var got []byte
		for range len(b) + 1 {
			raw, _, err := ReadEvent(br, &left)
			if errors.Is(err, ErrOverBounds) {
				return
			}
			got = append(got, raw...)
			if err != nil {
				break
			}
		}
		if !bytes.Equal(got, b) {
			t.Errorf("events read %q, stream %q", got, b)
		}
		if budget-left > int64(len(b)) {
			t.Errorf("took %d of the budget for %d bytes", budget-left, len(b))
		}
	})
}

func TestBetweenEvents(t *testing.T) {
	var tail []byte
	for _, c := range []struct {
		write   string
		between bool
	}{{"", true}, {"data: a\n", false}, {"\n", true}, {"data: b", false}, {"\r\r", true}, {"x", false}, {"yz\n\nabc", false}, {"\n\n", true}} {
		tail = AppendTail(tail, []byte(c.write))
		if got := BetweenEvents(tail); got != c.between {
			t.Errorf("after %q: BetweenEvents = %v, want %v", c.write, got, c.between)
		}
	}
}

// decodeString and memberName read every JSON string as json.Unmarshal
// does (escapes, invalid UTF-8, a non-string), plain ones without it.
func TestDecodeStringAsJSON(t *testing.T) {
	for _, in := range []string{`"tools/list"`, `"tools\/list"`, `"caf\u00e9"`, "\"caf\xc3\xa9\"", "\"bad\xff\"",
		`""`, `"a\"b"`, "\"tab\there\"", `12`, `"unterminated`, `null`} {
		var want, got string
		wantErr := json.Unmarshal([]byte(in), &want)
		gotErr := decodeString([]byte(in), &got)
		if got != want || (gotErr == nil) != (wantErr == nil) {
			t.Errorf("decodeString(%q) = %q, %v; json.Unmarshal: %q, %v", in, got, gotErr, want, wantErr)
		}
		name, err := memberName([]byte(in))
		if string(name) != want || (err == nil) != (wantErr == nil) {
			t.Errorf("memberName(%q) = %q, %v; json.Unmarshal: %q, %v", in, name, err, want, wantErr)
		}
	}
}

// An event is read with its lines appended in place: one growing slice
// and the data, not a slice per line.
func TestReadEventAllocations(t *testing.T) {
	event := "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"tools\":[]}}\n\n"
	sr := strings.NewReader(event)
	br := bufio.NewReader(sr)
	allocs := testing.AllocsPerRun(100, func() {
		sr.Reset(event)
		br.Reset(sr)
		budget := int64(1 << 20)
		if raw, data, err := ReadEvent(br, &budget); err != nil || string(raw) != event || !strings.HasPrefix(string(data), "{") {
			t.Fatalf("%q %q %v", raw, data, err)
		}
	})
	if allocs > 4 {
		t.Errorf("%.0f allocations to read a three-line event, want at most 4", allocs)
	}
	t.Logf("%.0f allocations", allocs)
}
