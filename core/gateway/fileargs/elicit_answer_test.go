package fileargs

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"
)

// testCarriers seal orig as "T<orig>" (quotes escaped by the JSON
// quoting) and open only those.
var testCarriers = Carriers{
	Seal: func(orig, data []byte) (string, error) { return "T" + string(orig), nil },
	Open: func(tok string) ([]byte, []byte, bool) {
		return []byte(strings.TrimPrefix(tok, "T")), []byte(`{"doc":{}}`), strings.HasPrefix(tok, "T")
	},
}

const testForm = `{"mode":"form","requestedSchema":{"type":"object","properties":{"doc":{"type":"string","x-mcp-file":{}}}}}`

// markSSE runs body through MarkAnswer as an SSE answer, read in reads of
// size.
func markSSE(t *testing.T, body string, size int) string {
	t.Helper()
	r, n := MarkAnswer(io.NopCloser(strings.NewReader(body)), int64(len(body)), "text/event-stream", false, testCarriers, 1<<20)
	if n != -1 {
		t.Fatalf("length %d; want -1 (an SSE answer may change)", n)
	}
	var out bytes.Buffer
	buf := make([]byte, size)
	for {
		k, err := r.Read(buf)
		out.Write(buf[:k])
		if err != nil {
			return out.String()
		}
	}
}

// In an SSE answer the elicitation with file fields gets a carrier for its
// id (its data lines joined into one; its id: and event: lines kept);
// every other event, a form without files, comments and a stream cut
// inside an event pass byte for byte, in any read size.
func TestMarkAnswerEvents(t *testing.T) {
	ask := "id: 7\r\nevent: message\r\ndata: {\"jsonrpc\":\"2.0\",\"id\":5,\r\ndata: \"method\":\"elicitation/create\",\"params\":" + testForm + "}\r\n\r\n"
	asked := "id: 7\r\nevent: message\r\ndata: {\"jsonrpc\":\"2.0\",\"id\":\"mcpblob-elicit.T5\",\"method\":\"elicitation/create\",\"params\":" + testForm + "}\n\r\n"
	plain := ": keep-alive\n\nid: 1\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"note\":\"x-mcp-file\"}}\n\n" +
		"data: {\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"elicitation/create\",\"params\":{\"mode\":\"url\",\"url\":\"https://x\",\"x-mcp-file\":1}}\n\n"
	required := "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"resultType\":\"input_required\",\"inputRequests\":{\"k\":{\"method\":\"elicitation/create\",\"params\":" + testForm + "}}}}\n\n"
	plain += strings.Replace(required, "input_required", "complete", 1)
	ask += required
	asked += strings.Replace(required, `{"k":`, `{"mcpblob-elicit.T\"k\"":`, 1)
	cut := "data: {\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"elicitation/create\",\"params\":" + testForm
	for size := 1; size < 70; size += 7 {
		if got := markSSE(t, plain+ask+plain+cut, size); got != plain+asked+plain+cut {
			t.Fatalf("reads of %d: %q;\nwant %q", size, got, plain+asked+plain+cut)
		}
	}
}

// An event over the bound passes as it comes, unread; so does one past
// it.
func TestMarkAnswerLargeEventPasses(t *testing.T) {
	big := "data: {\"id\":5,\"method\":\"elicitation/create\",\"params\":" + strings.Replace(testForm, `"x-mcp-file":{}`,
		`"x-mcp-file":{},"pad":"`+strings.Repeat("x", maxMarkedEvent)+`"`, 1) + "}\n\n"
	next := "data: {\"id\":6,\"method\":\"elicitation/create\",\"params\":" + testForm + "}\n\n"
	got := markSSE(t, big+next, 32<<10)
	if !strings.HasPrefix(got, big) || !strings.Contains(got[len(big):], `"id":"mcpblob-elicit.T6"`) {
		t.Fatalf("got %.100q…%q", got, got[len(big):])
	}
}

// A 2026-07-28 JSON answer: the keys of the input requests with file
// fields get carriers, the rest stays byte for byte; the length follows.
func TestMarkAnswerInputRequired(t *testing.T) {
	body := `{"jsonrpc":"2.0","id":1,"result":{"inputRequests":{"pick":{"method":"elicitation/create","params":` + testForm +
		`},"s":{"method":"sampling/createMessage","params":{"x-mcp-file":1}}}, "resultType" : "input_required","requestState":"z"}}`
	want := strings.Replace(body, `"pick"`, `"mcpblob-elicit.T\"pick\""`, 1)
	r, n := MarkAnswer(io.NopCloser(strings.NewReader(body)), -1, "application/json", true, testCarriers, 1<<20)
	got, _ := io.ReadAll(r)
	if string(got) != want || n != int64(len(want)) {
		t.Fatalf("got %q (%d); want %q", got, n, want)
	}
	for _, other := range []string{strings.Replace(body, "input_required", "complete", 1), body[:len(body)-1]} {
		r, n = MarkAnswer(io.NopCloser(strings.NewReader(other)), int64(len(other)), "application/json", true, testCarriers, 1<<20)
		if got, _ := io.ReadAll(r); string(got) != other || n != int64(len(other)) {
			t.Fatalf("got %q (%d); want it unchanged", got, n)
		}
	}
}

// MarkMessage never panics and, when it marks, keeps valid JSON valid and
// every byte outside the carriers.
func FuzzMarkMessage(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":5,"method":"elicitation/create","params":` + testForm + `}`))
	f.Add([]byte(`{"result":{"resultType":"input_required","inputRequests":{"k\"":{"method":"elicitation/create","params":` + testForm + `}}}}`))
	f.Fuzz(func(t *testing.T, msg []byte) {
		out, ok := MarkMessage(msg, testCarriers)
		if !ok {
			return
		}
		if jsonValid(msg) && !jsonValid(out) {
			t.Fatalf("%q marked into invalid JSON %q", msg, out)
		}
		back := strings.NewReplacer(`"mcpblob-elicit.T`, ``).Replace(string(out))
		if len(out) <= len(msg) || !strings.Contains(string(out), `"mcpblob-elicit.T`) || len(back) > len(out) {
			t.Fatalf("%q marked into %q", msg, out)
		}
	})
}

func jsonValid(b []byte) bool { return json.Valid(b) }
