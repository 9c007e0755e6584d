package mcp

// The io.modelcontextprotocol/tasks extension (SEP-2663), 2026-07-28 era:
// a tools/call may answer with a CreateTaskResult and run on in the
// background; the client polls tasks/get (the result is inlined there),
// answers input requests with tasks/update and stops it with tasks/cancel.
// Tasks live in this process's memory (package tasks), bound to the
// principal that created them. It is enabled only when a registered tool
// supports tasks (today the conformance fixtures).

import (
	"fmt"

	"github.com/mcpblob/mcpblob/core/mcp/clientcaps"
	"github.com/mcpblob/mcpblob/core/mcp/jsonrpc"
	"github.com/mcpblob/mcpblob/core/mcp/scan"
	"github.com/mcpblob/mcpblob/core/mcp/tasks"
)

// ExtTasks is the tasks extension id.
const ExtTasks = "io.modelcontextprotocol/tasks"

// enableTasks offers the tasks extension and its methods (once a tool
// supports tasks).
func (s *Server) enableTasks() {
	if s.tasks != nil {
		return
	}
	s.tasks = &tasks.Store{}
	needExt := func(c *Call) *Error {
		if !c.hasExtension(ExtTasks) {
			return missingExtension(ExtTasks)
		}
		return nil
	}
	modern := func(m *method) *method { m.modern = true; m.precheck = needExt; return m }
	s.methods["tasks/get"] = modern(&method{run: s.tasksGet})
	s.methods["tasks/update"] = modern(&method{run: s.tasksUpdate})
	s.methods["tasks/cancel"] = modern(&method{run: s.tasksCancel})
}

// hasExtension reports whether the client's capabilities list extension id.
func (c *Call) hasExtension(id string) bool { return clientcaps.HasExtension(c.caps, id) }

func missingExtension(id string) *Error { return jsonrpc.MissingExtension(id) }

// TasksOK reports whether this call may answer with a CreateTaskResult.
func (c *Call) TasksOK() bool {
	return c.modern && c.srv.tasks != nil && c.task == nil && c.hasExtension(ExtTasks)
}

// RunAsTask runs work in the background as a task (SEP-2663) when the
// client negotiated the tasks extension and answers with the
// CreateTaskResult; otherwise it runs work now and answers with its result.
// The task's call has no stream and outlives the request; it asks for input
// with Input as usual (the client answers through tasks/update).
func (c *Call) RunAsTask(work func(tc *Call) (*ToolResult, error)) (*ToolResult, error) {
	if !c.TasksOK() {
		return work(c)
	}
	s := c.srv
	ctx, cancel := s.callContext(c)
	t := tasks.New(c.principal, cancel)
	s.tasks.Add(t)
	tc := *c
	// The transport may recycle the request once it is answered: keep
	// nothing of it but the parsed params.
	tc.ctx, tc.out, tc.task, tc.progressToken, tc.header = ctx, nil, t, nil, HeaderMap{}
	go func() {
		defer cancel()
		res, err := runTask(&tc, work)
		t.Finish(res, err, func(err error) *Error { return s.toError(&Call{method: "tools/call"}, err) })
	}()
	return &ToolResult{special: t.CreateResult()}, nil
}

func runTask(c *Call, work func(*Call) (*ToolResult, error)) (res Object, err error) {
	defer func() {
		if p := recover(); p != nil {
			c.srv.log.Error("mcp: task panic", "task", c.task.ID(), "panic", p)
			res, err = nil, jsonrpc.NewError(CodeInternalError, "Internal error", nil)
		}
	}()
	r, err := work(c)
	if err != nil {
		if o, ierr := c.srv.inputOutcome(c, err); o != nil || ierr != nil {
			return o, ierr
		}
		return nil, err
	}
	return r.object(), nil
}

// taskInput asks the client for input from inside a task: the task turns
// input_required with the requests until tasks/update has answered every
// key.
func (c *Call) taskInput(reqs map[string]InputRequest) (map[string]*Answer, error) {
	pending := make(map[string]any, len(reqs))
	for k, r := range reqs {
		pending[k] = Object{"method": r.Method, "params": r.Params}
	}
	// The task waits for tasks/update holding one unit of the pending
	// budget; over it the task fails with the limit's error.
	release, err := c.HoldPending()
	if err != nil {
		return nil, err
	}
	answers, err := c.task.AwaitInput(c.ctx, pending)
	release()
	if err != nil {
		return nil, err
	}
	got := map[string]*Answer{}
	for k, v := range answers {
		got[k] = &Answer{Result: v, path: "/params/inputResponses/" + scan.PathElem(k) + "/content/", call: c}
	}
	return got, nil
}

func (s *Server) lookupTask(c *Call) (*tasks.Task, error) {
	var id string
	if e := c.param("taskId", &id); e != nil {
		return nil, e
	}
	t := s.tasks.Lookup(id, c.principal)
	if t == nil {
		return nil, jsonrpc.NewError(CodeInvalidParams, fmt.Sprintf("Invalid params: unknown task %q", id), Object{"taskId": id})
	}
	return t, nil
}

func (s *Server) tasksGet(c *Call) (any, error) {
	t, err := s.lookupTask(c)
	if err != nil {
		return nil, err
	}
	return t.Get(), nil
}

func (s *Server) tasksUpdate(c *Call) (any, error) {
	t, err := s.lookupTask(c)
	if err != nil {
		return nil, err
	}
	responses, err := c.inputResponses()
	if err != nil {
		return nil, err
	}
	t.Update(responses)
	return Object{}, nil
}

func (s *Server) tasksCancel(c *Call) (any, error) {
	t, err := s.lookupTask(c)
	if err != nil {
		return nil, err
	}
	t.Cancel()
	return Object{}, nil
}
