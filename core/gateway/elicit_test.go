package gateway

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpblob/mcpblob/core/token"
	"github.com/mcpblob/mcpblob/storage/storagetest"
)

// The form every elicitation of elicitUpstream asks: a PDF "doc" up to
// 1 MiB, and a plain "note".
const elicitForm = `{"mode":"form","message":"Pick a PDF","requestedSchema":{"type":"object","properties":{` +
	`"doc":{"type":"string","format":"uri","title":"Document","x-mcp-file":{"accept":["application/pdf"],"maxSize":1048576}},` +
	`"note":{"type":"string"}},"required":["doc"]}}`

// elicitUpstream is a test upstream whose tools/call asks for a file by
// elicitation: in the 2025-11-25 era an elicitation/create (id 5) on the
// call's SSE stream, answered by a POSTed response; in the 2026-07-28 era
// an input_required result (key "pick"), answered by a retry. It keeps
// the first 2 MiB of every answer body it got (its bytes, and whether it
// arrived whole).
type elicitUpstream struct {
	*httptest.Server
	event    string        // the elicitation/create event it sends
	answers  chan upAnswer // 2025-11-25 answers to the elicitation
	received atomic.Int64  // answer body bytes received
	whole    atomic.Int64  // answer bodies that arrived whole
	last     atomic.Value  // the last whole answer body (string)
	required atomic.Value  // the input_required answer it sent (string)
}

type upAnswer struct{ body []byte }

func newElicitUpstream(t *testing.T) *elicitUpstream {
	t.Helper()
	u := &elicitUpstream{answers: make(chan upAnswer, 4),
		event: "id: e1\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"elicitation/create\",\"params\":" + elicitForm + "}\n\n"}
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, whole := u.read(r.Body)
		switch {
		case r.Header.Get("Mcp-Method") == "tools/call":
			u.modern(w, body, whole)
		case bytes.Contains(body, []byte(`"method":"tools/call"`)):
			u.legacy(w)
		case whole:
			u.answers <- upAnswer{body}
			w.WriteHeader(http.StatusAccepted)
		}
	}))
	t.Cleanup(u.Server.Close)
	return u
}

// read reads a body, keeping its first 2 MiB.
func (u *elicitUpstream) read(r io.Reader) ([]byte, bool) {
	var keep bytes.Buffer
	buf := make([]byte, 32<<10)
	for {
		n, err := r.Read(buf)
		u.received.Add(int64(n))
		if keep.Len() < 2<<20 {
			keep.Write(buf[:n])
		}
		if err == io.EOF {
			u.whole.Add(1)
			u.last.Store(keep.String())
			return keep.Bytes(), true
		}
		if err != nil {
			return keep.Bytes(), false
		}
	}
}

// legacy answers a 2025-11-25 tools/call: the elicitation, then, once the
// answer came, a result quoting it.
func (u *elicitUpstream) legacy(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/event-stream")
	io.WriteString(w, u.event)
	w.(http.Flusher).Flush()
	var got string
	select {
	case a := <-u.answers:
		got = string(a.body)
	case <-time.After(10 * time.Second):
		got = "no answer"
	}
	if strings.Contains(got, `"action":"accept"`) {
		got = "accepted"
	}
	q, _ := json.Marshal(got[:min(len(got), 300)])
	fmt.Fprintf(w, "id: e2\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[{\"type\":\"text\",\"text\":%s}]}}\n\n", q)
}

// modern answers a 2026-07-28 tools/call: input_required, or for a whole
// retry a result.
func (u *elicitUpstream) modern(w http.ResponseWriter, body []byte, whole bool) {
	if !whole {
		return
	}
	w.Header().Set("Content-Type", "application/json")
	if !bytes.Contains(body, []byte(`"inputResponses"`)) {
		ans := `{"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required","inputRequests":{"pick":{"method":"elicitation/create","params":` +
			elicitForm + `},"other":{"method":"elicitation/create","params":{"mode":"form","message":"m","requestedSchema":{"type":"object","properties":{}}}}},"requestState":"st-1"}}`
		u.required.Store(ans)
		io.WriteString(w, ans)
		return
	}
	io.WriteString(w, `{"jsonrpc":"2.0","id":2,"result":{"resultType":"complete","content":[{"type":"text","text":"done"}]}}`)
}

// pdfURI is a data URI of a size-byte PDF (png: it sniffs as PNG).
func pdfURI(size int, png bool) string {
	b := append([]byte("%PDF-1.7\n"), bytes.Repeat([]byte("x"), size-9)...)
	if png {
		copy(b, "\x89PNG\r\n\x1a\n")
	}
	return "data:application/pdf;base64," + base64.StdEncoding.EncodeToString(b)
}

// twoNodes are two gateway nodes in front of up sharing their keys: what
// one relays, the other answers.
func twoNodes(t *testing.T, up string) (a, b string) {
	kr := token.NewRandomKeyring()
	same := func(o *Options) { o.Keyring = kr }
	return serveGateway(t, newGateway(t, up, same)).URL, serveGateway(t, newGateway(t, up, same)).URL
}

// legacyElicitation opens a 2025-11-25 tools/call through node and reads
// the elicitation event: its bytes and the open stream.
func legacyElicitation(t *testing.T, node string) (string, *bufio.Reader, io.Closer) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, node+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"upload","arguments":{}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(resp.Body)
	var ev strings.Builder
	for {
		line, err := br.ReadString('\n')
		ev.WriteString(line)
		if err != nil || line == "\n" {
			break
		}
	}
	return ev.String(), br, resp.Body
}

// carrierOf is the carrier (a JSON string) that replaced orig in got,
// which must otherwise equal sent byte for byte.
func carrierOf(t *testing.T, sent, got, orig string) string {
	t.Helper()
	i := strings.Index(got, `"mcpblob-elicit.`)
	if i < 0 {
		t.Fatalf("no carrier in %q", got)
	}
	j := i + 1 + strings.IndexByte(got[i+1:], '"') + 1
	if got[:i]+orig+got[j:] != sent {
		t.Fatalf("the client got %q; want the upstream's %q with only %s replaced", got, sent, orig)
	}
	return got[i:j]
}

// postAnswer POSTs body to node as a 2025-11-25 client does.
func postAnswer(t *testing.T, node, body string) (*http.Response, []byte) {
	return post(t, node, map[string]string{"MCP-Protocol-Version": "2025-11-25"}, body)
}

// elicitRefused checks b is the -32602 naming field "doc" (and input
// "pick" when input) and saying want.
func elicitRefused(t *testing.T, status int, b []byte, want, input string) {
	t.Helper()
	var m struct {
		ID    json.RawMessage `json:"id"`
		Error struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
			Data    struct {
				Field string `json:"field"`
				Input string `json:"input"`
			} `json:"data"`
		} `json:"error"`
	}
	if json.Unmarshal(b, &m) != nil || m.Error.Code != -32602 || m.Error.Data.Field != "doc" || m.Error.Data.Input != input ||
		!strings.Contains(m.Error.Message, `field "doc"`) || !strings.Contains(m.Error.Message, want) {
		t.Fatalf("answer %d %s; want -32602 naming field \"doc\" (input %q) and %q", status, b, input, want)
	}
}

// 2025-11-25: the elicitation reaches the client with a carrier for its
// id, all else byte for byte; a good file, answered through another
// node, reaches the upstream byte for byte but for the id (back to 5,
// padded), in either member order.
func TestElicitLegacyGoodFileThroughAnotherNode(t *testing.T) {
	up := newElicitUpstream(t)
	a, b := twoNodes(t, up.URL)
	doc := pdfURI(512<<10, false)
	for _, idFirst := range []bool{false, true} {
		ev, br, c := legacyElicitation(t, a)
		carrier := carrierOf(t, up.event, ev, "5")
		body := `{"result":{"action":"accept","content":{"doc":"` + doc + `","note":"n"}},"jsonrpc":"2.0","id":` + carrier + `}`
		if idFirst {
			body = `{"jsonrpc":"2.0","id":` + carrier + `,"result":{"action":"accept","content":{"note":"n","doc":"` + doc + `"}}}`
		}
		if resp, ans := postAnswer(t, b, body); resp.StatusCode != http.StatusAccepted {
			t.Fatalf("answer %d %s; want 202", resp.StatusCode, ans)
		}
		want := strings.Replace(body, carrier, "5"+strings.Repeat(" ", len(carrier)-1), 1)
		if got, _ := up.last.Load().(string); got != want {
			t.Fatalf("the upstream got %.200q…; want the client's body with the id restored", got)
		}
		rest, _ := io.ReadAll(br)
		c.Close()
		if !strings.Contains(string(rest), `"text":"accepted"`) {
			t.Fatalf("the call's result: %q; want the upstream's, quoting the answer", rest)
		}
	}
}

// 2025-11-25: a file over maxSize or of the wrong type is refused, 400
// and -32602 naming the field; the upstream never gets a whole answer
// with it, but the error response for its elicitation (-32602 naming the
// field), and the call ends with it. With the id first, the body is cut
// near maxSize.
func TestElicitLegacyBadFileRefused(t *testing.T) {
	cases := []struct {
		name, doc, want string
		idFirst         bool
	}{
		{"too big, id first", pdfURI(8<<20, false), "file is larger than maxSize 1048576 bytes", true},
		{"too big, id last", pdfURI(8<<20, false), "file is larger than maxSize 1048576 bytes", false},
		{"declared type", "data:image/png;base64,iVBORw0KGgo=", `media type "image/png" is not accepted (accept: application/pdf)`, false},
		{"sniffed type", pdfURI(4<<10, true), "content is image/png, which is not accepted (accept: application/pdf)", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			up := newElicitUpstream(t)
			a, b := twoNodes(t, up.URL)
			ev, br, cl := legacyElicitation(t, a)
			defer cl.Close()
			carrier := carrierOf(t, up.event, ev, "5")
			body := `{"result":{"action":"accept","content":{"doc":"` + c.doc + `"}},"jsonrpc":"2.0","id":` + carrier + `}`
			if c.idFirst {
				body = `{"jsonrpc":"2.0","id":` + carrier + `,"result":{"action":"accept","content":{"doc":"` + c.doc + `"}}}`
			}
			resp, ans := postAnswer(t, b, body)
			if resp.StatusCode != http.StatusBadRequest {
				t.Fatalf("answer %d %s; want 400", resp.StatusCode, ans)
			}
			elicitRefused(t, resp.StatusCode, ans, c.want, "")
			rest, _ := io.ReadAll(br)
			if !strings.Contains(string(rest), `\"id\":5,\"error\":{\"code\":-32602`) || !strings.Contains(string(rest), `field \\\"doc\\\"`) {
				t.Fatalf("the call's result: %q; want the upstream to have got the -32602 for its elicitation 5", rest)
			}
			if got, _ := up.last.Load().(string); strings.Contains(got, `"action"`) {
				t.Fatalf("the upstream got the whole answer: %.200q", got)
			}
			if c.idFirst && up.received.Load() > 3<<20 {
				t.Errorf("the upstream received %d bytes of the %d-byte answer; want it cut near maxSize", up.received.Load(), len(body))
			}
			t.Logf("the upstream received %d bytes of the %d-byte answer", up.received.Load(), len(body))
		})
	}
}

// modernCall POSTs a 2026-07-28 tools/call to node.
func modernCall(t *testing.T, node, params string, id int) (*http.Response, []byte) {
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}}}}`
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"upload","arguments":{},%s%s}}`, id, params, meta)
	return post(t, node, map[string]string{"Mcp-Method": "tools/call", "Mcp-Name": "upload", "MCP-Protocol-Version": "2026-07-28"}, body)
}

// 2026-07-28: the input_required result reaches the client with a carrier
// for the key of the request with file fields ("pick"; "other" has none
// and stays); a retry through another node with a good file reaches the
// upstream byte for byte but for the key (back to "pick", padded); a bad
// one gets -32602 naming "pick" and "doc", and the upstream no retry.
func TestElicitModernRetry(t *testing.T) {
	up := newElicitUpstream(t)
	a, b := twoNodes(t, up.URL)
	retry := func(doc string) (*http.Response, []byte, string) {
		resp, ans := modernCall(t, a, "", 1)
		sent, _ := up.required.Load().(string)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("input_required answer %d %s", resp.StatusCode, ans)
		}
		key := carrierOf(t, sent, string(ans), `"pick"`)
		params := `"inputResponses":{` + key + `:{"action":"accept","content":{"doc":"` + doc + `"}},"other":{"action":"decline"}},"requestState":"st-1",`
		resp, ans = modernCall(t, b, params, 2)
		return resp, ans, key
	}
	resp, ans, key := retry(pdfURI(256<<10, false))
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(ans), `"done"`) {
		t.Fatalf("retry answer %d %s; want the upstream's result", resp.StatusCode, ans)
	}
	if got, _ := up.last.Load().(string); !strings.Contains(got, `"inputResponses":{"pick"`+strings.Repeat(" ", len(key)-6)+`:{"action":"accept"`) {
		t.Fatalf("the upstream got %.300q; want the key restored, padded", got)
	}
	whole := up.whole.Load()
	for _, c := range []struct{ doc, want string }{
		{pdfURI(2<<20, false), "file is larger than maxSize 1048576 bytes"},
		{"data:text/plain,hello", `media type "text/plain" is not accepted`},
	} {
		resp, ans, _ := retry(c.doc)
		elicitRefused(t, resp.StatusCode, ans, c.want, "pick")
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(ans), `"id":2`) {
			t.Fatalf("refusal %d %s; want HTTP 200 for the retry's id", resp.StatusCode, ans)
		}
		whole++ // the input_required call, not the retry
		if up.whole.Load() != whole {
			t.Fatalf("the upstream got %d whole bodies; want %d (no retry)", up.whole.Load(), whole)
		}
	}
}

// A client answering with a carrier made for another principal, or one
// made up, reaches the upstream as it sent it: no check, no restored id.
func TestElicitForeignCarrierPassesAsSent(t *testing.T) {
	up := newElicitUpstream(t)
	kr := token.NewRandomKeyring()
	g := newGateway(t, up.URL, func(o *Options) { o.Keyring = kr })
	other := g.carriers("bob")
	tok, _ := other.Seal([]byte("5"), []byte(`{"doc":{"maxSize":1}}`))
	node := serveGateway(t, g).URL
	for _, carrier := range []string{`"mcpblob-elicit.` + tok + `"`, `"mcpblob-elicit.~made.up"`} {
		body := `{"jsonrpc":"2.0","id":` + carrier + `,"result":{"action":"accept","content":{"doc":"` + pdfURI(4<<10, false) + `"}}}`
		if resp, ans := postAnswer(t, node, body); resp.StatusCode != http.StatusAccepted {
			t.Fatalf("answer %d %s; want 202", resp.StatusCode, ans)
		}
		if got := (<-up.answers).body; string(got) != body {
			t.Fatalf("the upstream got %.200q; want the body as sent", got)
		}
	}
}

// A hostile client's answer with its id last (nothing known until then)
// and a 64 MiB file is measured as it streams: the heap stays flat, and
// the file is refused at the id.
func TestElicitLateIDFlatMemory(t *testing.T) {
	size := 64 << 20
	if testing.Short() || raceEnabled {
		size = 16 << 20
	}
	up := newElicitUpstream(t)
	a, b := twoNodes(t, up.URL)
	ev, _, cl := legacyElicitation(t, a)
	defer cl.Close()
	carrier := carrierOf(t, up.event, ev, "5")
	prefix := `{"result":{"action":"accept","content":{"doc":"data:application/pdf;base64,`
	suffix := `"}},"jsonrpc":"2.0","id":` + carrier + `}`
	pr, pw := io.Pipe()
	go func() {
		enc := base64.NewEncoder(base64.StdEncoding, pw)
		enc.Write([]byte("%PDF-1.7\n"))
		io.Copy(enc, &patternReader{n: int64(size - 9)})
		enc.Close()
		pw.Close()
	}()
	n := int64(len(prefix) + base64.StdEncoding.EncodedLen(size) + len(suffix))
	heap := storagetest.StartHeapMonitor()
	resp, ans := postCall(t, b, io.MultiReader(strings.NewReader(prefix), pr, strings.NewReader(suffix)), n)
	grew := heap.Stop()
	elicitRefused(t, resp.StatusCode, ans, "file is larger than maxSize 1048576 bytes", "")
	if up.whole.Load() != 2 { // the tools/call, the gateway's error response
		t.Fatalf("the upstream got %d whole bodies; want the call and the gateway's error response", up.whole.Load())
	}
	if grew > 16<<20 {
		t.Errorf("heap grew %d bytes measuring a %d-byte file; bound 16 MiB", grew, size)
	}
	t.Logf("%d MiB file, id last: heap grew %.2f MiB; the upstream received %d bytes", size>>20, float64(grew)/(1<<20), up.received.Load())
}

// A hostile upstream's GET stream: a form without file fields, one with
// more file fields than the gateway reads, and a 64 MiB event mentioning
// x-mcp-file all pass byte for byte, with the heap flat.
func TestElicitHostileUpstreamBounded(t *testing.T) {
	size := 64 << 20
	if testing.Short() || raceEnabled {
		size = 16 << 20
	}
	var many strings.Builder
	for i := range 5000 {
		fmt.Fprintf(&many, `"f%d":{"type":"string","x-mcp-file":{}},`, i)
	}
	events := []string{
		"data: {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"elicitation/create\",\"params\":{\"mode\":\"form\",\"message\":\"x-mcp-file\",\"requestedSchema\":{\"type\":\"object\",\"properties\":{\"n\":{\"type\":\"string\"}}}}}\n\n",
		"data: {\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"elicitation/create\",\"params\":{\"mode\":\"form\",\"requestedSchema\":{\"properties\":{" + many.String() + "\"z\":{}}}}}\n\n",
	}
	bigHead := "data: {\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"elicitation/create\",\"params\":" + strings.TrimSuffix(elicitForm, "}") + ",\"pad\":\""
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, ev := range events {
			io.WriteString(w, ev)
		}
		io.WriteString(w, bigHead)
		mib := bytes.Repeat([]byte("x"), 1<<20)
		for range size >> 20 {
			w.Write(mib)
		}
		io.WriteString(w, "\"}}\n\n")
	}))
	defer up.Close()
	gw := serveGateway(t, newGateway(t, up.URL, nil)).URL
	heap := storagetest.StartHeapMonitor()
	req, _ := http.NewRequest(http.MethodGet, gw+"/mcp", nil)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	head := make([]byte, len(events[0])+len(events[1])+len(bigHead))
	if _, err := io.ReadFull(resp.Body, head); err != nil || string(head) != events[0]+events[1]+bigHead {
		t.Fatalf("the stream's start changed (%v): %.300q", err, head)
	}
	n, _ := io.Copy(io.Discard, resp.Body)
	grew := heap.Stop()
	if n != int64(size)+5 {
		t.Fatalf("the large event's rest: %d bytes; want %d", n, size+5)
	}
	if grew > 16<<20 {
		t.Errorf("heap grew %d bytes relaying a %d-byte event; bound 16 MiB", grew, size)
	}
	t.Logf("hostile forms relayed unchanged; %d MiB event: heap grew %.2f MiB", size>>20, float64(grew)/(1<<20))
}
