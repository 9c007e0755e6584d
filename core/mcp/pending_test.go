package mcp

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpblob/mcpblob/core/mcp/limits"
)

// liveResponse is a ResponseWriter whose body a test reads while it is
// written, as a client on a socket would, and can stop reading (leave).
type liveResponse struct {
	header HeaderMap
	status int
	pr     *io.PipeReader
	pw     *io.PipeWriter
	br     *bufio.Reader
}

func newLiveResponse() *liveResponse {
	pr, pw := io.Pipe()
	return &liveResponse{header: HeaderMap{}, pr: pr, pw: pw, br: bufio.NewReader(pr)}
}

func (l *liveResponse) SetStatus(code int)           { l.status = code }
func (l *liveResponse) SetHeader(name, value string) { l.header[name] = value }

func (l *liveResponse) SetBody(b []byte) {
	go func() {
		_, _ = l.pw.Write(b)
		_ = l.pw.Close()
	}()
}

func (l *liveResponse) SetBodyStream(_ int64, write func(StreamWriter) error) {
	go func() {
		_ = l.pw.CloseWithError(write(pipeStream{l.pw}))
	}()
}

type pipeStream struct{ *io.PipeWriter }

func (pipeStream) Flush() error { return nil }

// next is the body's next JSON-RPC message (an SSE event's data, or a
// plain JSON body); false at its end.
func (l *liveResponse) next(t *testing.T) (rpcMessage, bool) {
	t.Helper()
	var data strings.Builder
	for {
		line, err := l.br.ReadString('\n')
		if d, ok := strings.CutPrefix(strings.TrimRight(line, "\r\n"), "data:"); ok {
			data.WriteString(strings.TrimPrefix(d, " "))
		}
		plainJSON := strings.HasPrefix(line, "{")
		if plainJSON {
			data.WriteString(line)
		}
		if (strings.TrimSpace(line) == "" || plainJSON || err != nil) && data.Len() > 0 {
			var m rpcMessage
			if jerr := json.Unmarshal([]byte(data.String()), &m); jerr != nil {
				t.Fatalf("bad message %q: %v", data.String(), jerr)
			}
			return m, true
		}
		if err != nil {
			return rpcMessage{}, false
		}
	}
}

// leave stops reading: the client went away.
func (l *liveResponse) leave() { _ = l.pr.Close() }

// startCall posts tools/call name on a live response and returns its first
// message: a server-to-client request, or the call's final answer.
func (c *testClient) startCall(name, args string) (*liveResponse, rpcMessage) {
	c.t.Helper()
	live := newLiveResponse()
	body := c.message("tools/call", `{"name":`+string(jsonString(name))+`,"arguments":`+args+`}`)
	c.s.ServeMCP(&Request{Method: http.MethodPost, Header: c.headers("tools/call", name), Body: strings.NewReader(body),
		Principal: c.principal}, live)
	m, ok := live.next(c.t)
	if !ok {
		c.t.Fatalf("tools/call %s: the response ended without a message", name)
	}
	return live, m
}

// formTool elicits a form with a file field, so each elicitation in flight
// also holds an expectation (session.Expectations).
var formTool = &Tool{
	Name:        "ask",
	Streams:     StreamForInput,
	InputSchema: json.RawMessage(`{"type":"object"}`),
	Handler: func(c *Call) (*ToolResult, error) {
		form := Object{"type": "object", "properties": Object{
			"file": Object{"type": "string", "format": "uri", "x-mcp-file": Object{"maxSize": 1024}}}}
		if _, err := c.Input(map[string]InputRequest{"f": Elicit("A file?", form)}); err != nil {
			return nil, err
		}
		return &ToolResult{Content: []Content{Text{Text: "thanks"}}}, nil
	},
}

// askAndLeave starts an elicitation that nobody will answer: the call runs
// on, waiting (2025-11-25 streams are resumable). It returns the
// elicitation's id.
func askAndLeave(t *testing.T, c *testClient) json.RawMessage {
	t.Helper()
	live, m := c.startCall("ask", `{}`)
	live.leave()
	if m.Method != "elicitation/create" || m.ID == nil {
		t.Fatalf("%s: want an elicitation/create request, got %+v", c.principal, m)
	}
	return m.ID
}

// refusedByPending checks that a call was refused by the pending budget in
// scope, before any request reached the client.
func refusedByPending(t *testing.T, c *testClient, scope string, max int64) {
	t.Helper()
	live, m := c.startCall("ask", `{}`)
	defer live.leave()
	if m.Method != "" || m.Error == nil || m.Error.Code != limits.CodeLimitExceeded {
		t.Fatalf("%s over the pending budget: got %+v; want the call's -32029 error and no request", c.principal, m)
	}
	var data struct {
		Limit string `json:"limit"`
		Scope string `json:"scope"`
		Max   int64  `json:"max"`
	}
	if json.Unmarshal(m.Error.Data, &data) != nil || data.Limit != "pending" || data.Scope != scope || data.Max != max {
		t.Fatalf("refusal data %s; want limit pending, scope %s, max %d", m.Error.Data, scope, max)
	}
}

func (s *Server) expectations() int {
	return s.expect.Len()
}

// TestPendingBudget: elicitations waiting for an answer are charged to the
// principal and the node; beyond either bound the tool call is refused
// with -32029 and nothing is sent; an answer or a cancellation gives the
// unit back (71946bf sent every one and held it until ClientTimeout).
func TestPendingBudget(t *testing.T) {
	s := NewServer(testImpl, &Options{Limits: limits.Limits{PendingPerPrincipal: 4, Pending: 6}, ClientTimeout: time.Minute})
	t.Cleanup(func() { _ = s.Close() })
	s.AddTool(formTool)
	mallory := newLegacyClientAs(t, s, "mallory")
	var ids []json.RawMessage
	for range 4 {
		ids = append(ids, askAndLeave(t, mallory))
	}
	for range 50 {
		refusedByPending(t, mallory, "principal", 4)
	}
	if got := s.expectations(); got != 4 {
		t.Errorf("%d file expectations held; want 4 (one per elicitation in flight)", got)
	}
	alice := newLegacyClientAs(t, s, "alice")
	askAndLeave(t, alice)
	askAndLeave(t, newLegacyClientAs(t, s, "bob"))
	refusedByPending(t, alice, "node", 6)

	// An answer gives mallory's unit back, and so does a cancellation.
	answer := `{"jsonrpc":"2.0","id":` + string(ids[0]) + `,"result":{"action":"decline"}}`
	if r := mallory.post(mallory.headers("", ""), strings.NewReader(answer)); r.rec.statusCode() != http.StatusAccepted {
		t.Fatalf("posting the answer: %d", r.rec.statusCode())
	}
	waitFor(t, "the answered elicitation's unit", func() bool { return s.budgets.Pending.Held("mallory") == 3 })
	askAndLeave(t, mallory)
	cancel := `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":` + strconv.Itoa(mallory.nextID) + `}}`
	if r := mallory.post(mallory.headers("", ""), strings.NewReader(cancel)); r.rec.statusCode() != http.StatusAccepted {
		t.Fatalf("cancelling: %d", r.rec.statusCode())
	}
	waitFor(t, "the cancelled call's unit", func() bool { return s.budgets.Pending.Held("mallory") == 3 })
	askAndLeave(t, mallory)
	if got := s.expectations(); got != 6 {
		t.Errorf("%d file expectations held; want 6", got)
	}
}

// TestPendingBudgetTimeouts: an elicitation nobody answers gives its unit
// back when ClientTimeout ends the wait.
func TestPendingBudgetTimeouts(t *testing.T) {
	s := NewServer(testImpl, &Options{Limits: limits.Limits{PendingPerPrincipal: 3}, ClientTimeout: 300 * time.Millisecond})
	t.Cleanup(func() { _ = s.Close() })
	s.AddTool(formTool)
	c := newLegacyClientAs(t, s, "mallory")
	for range 3 {
		askAndLeave(t, c)
	}
	refusedByPending(t, c, "principal", 3)
	waitFor(t, "the timed-out elicitations' units", func() bool { return s.budgets.Pending.Total() == 0 })
	if got := s.expectations(); got != 0 {
		t.Errorf("%d file expectations held after the timeouts; want 0", got)
	}
	askAndLeave(t, c)
}

// TestPendingBudgetBoundsMemory drives the attack: one principal starts
// 1,000 tool calls that each elicit and leave. Only the default 64 wait;
// the node's heap and stacks grow by less than 4 MiB (71946bf held all
// 1,000 calls, their goroutines and streams, for ClientTimeout).
func TestPendingBudgetBoundsMemory(t *testing.T) {
	s := NewServer(testImpl, &Options{ClientTimeout: time.Minute})
	t.Cleanup(func() { _ = s.Close() })
	s.AddTool(formTool)
	c := newLegacyClientAs(t, s, "mallory")
	before := memInUse()
	for range 1000 {
		live, _ := c.startCall("ask", `{}`)
		live.leave()
	}
	grew := int64(memInUse()) - int64(before)
	if held := s.budgets.Pending.Held("mallory"); held != limits.DefaultPendingPerPrincipal {
		t.Errorf("mallory holds %d pending units; want %d", held, limits.DefaultPendingPerPrincipal)
	}
	if n := s.expectations(); n > limits.DefaultPendingPerPrincipal {
		t.Errorf("%d file expectations held; want at most %d", n, limits.DefaultPendingPerPrincipal)
	}
	if grew > 4<<20 {
		t.Errorf("1,000 unanswered elicitations grew heap and stacks by %d KiB; want under 4 MiB", grew>>10)
	}
}

// memInUse is the heap and goroutine stacks in use, after a collection.
func memInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse + m.StackInuse
}

// taskAskTool runs as a task that asks for input and waits for tasks/update.
var taskAskTool = &Tool{
	Name:        "task_ask",
	TaskSupport: TaskOptional,
	InputSchema: json.RawMessage(`{"type":"object"}`),
	Handler: func(c *Call) (*ToolResult, error) {
		return c.RunAsTask(func(tc *Call) (*ToolResult, error) {
			if _, err := tc.Input(map[string]InputRequest{"ok": Elicit("Sure?", Object{"type": "object"})}); err != nil {
				return nil, err
			}
			return &ToolResult{Content: []Content{Text{Text: "done"}}}, nil
		})
	},
}

// TestPendingBudgetTasks: a task waiting for tasks/update holds a unit of
// the pending budget; beyond it the task fails with -32029, and an update
// gives the unit back.
func TestPendingBudgetTasks(t *testing.T) {
	s := NewServer(testImpl, &Options{Limits: limits.Limits{PendingPerPrincipal: 2}})
	t.Cleanup(func() { _ = s.Close() })
	s.AddTool(taskAskTool)
	c := newModernClient(t, s).as("mallory")
	c.caps = `{"elicitation":{},"extensions":{"` + ExtTasks + `":{}}}`
	start := func() string {
		t.Helper()
		var r struct {
			TaskID string `json:"taskId"`
		}
		if res := c.callTool("task_ask", `{}`); json.Unmarshal(res.Result, &r) != nil || r.TaskID == "" {
			t.Fatalf("tools/call: %s", res.rec.body.String())
		}
		return r.TaskID
	}
	status := func(id string) (string, *rpcError) {
		var r struct {
			Status string    `json:"status"`
			Error  *rpcError `json:"error"`
		}
		_ = json.Unmarshal(c.request("tasks/get", id, `{"taskId":"`+id+`"}`).Result, &r)
		return r.Status, r.Error
	}
	first := start()
	start()
	waitFor(t, "two tasks waiting for input", func() bool { return s.budgets.Pending.Held("mallory") == 2 })
	third := start()
	waitFor(t, "the third task to fail", func() bool { st, _ := status(third); return st == "failed" })
	if _, e := status(third); e == nil || e.Code != limits.CodeLimitExceeded || !strings.Contains(string(e.Data), `"limit":"pending"`) {
		t.Fatalf("the task over the budget failed with %+v; want -32029 naming the pending limit", e)
	}
	if r := c.request("tasks/update", first, `{"taskId":"`+first+`","inputResponses":{"ok":{"action":"accept","content":{}}}}`); r.Error != nil {
		t.Fatalf("tasks/update: %+v", r.Error)
	}
	waitFor(t, "the answered task's unit", func() bool { return s.budgets.Pending.Held("mallory") == 1 })
	fourth := start()
	waitFor(t, "the fourth task to wait for input", func() bool { st, _ := status(fourth); return st == "input_required" })
}
