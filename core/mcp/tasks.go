package mcp

// The io.modelcontextprotocol/tasks extension (SEP-2663), 2026-07-28 era:
// a tools/call may answer with a CreateTaskResult and run on in the
// background; the client polls tasks/get (the result is inlined there),
// answers input requests with tasks/update and stops it with tasks/cancel.
// Tasks live in this process's memory, bound to the principal that created
// them. It is enabled only when a registered tool supports tasks (today the
// conformance fixtures).

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"github.com/mcpblob/mcpblob/core/mcp/jsonrpc"
	"github.com/mcpblob/mcpblob/core/mcp/scan"
	"net/http"
	"sync"
	"time"
)

// ExtTasks is the tasks extension id.
const ExtTasks = "io.modelcontextprotocol/tasks"

const (
	taskTTL          = 10 * time.Minute
	taskPollInterval = 250 * time.Millisecond
)

// Task statuses.
const (
	taskWorking       = "working"
	taskInputRequired = "input_required"
	taskCompleted     = "completed"
	taskFailed        = "failed"
	taskCancelled     = "cancelled"
)

type task struct {
	id        string
	principal string
	created   time.Time
	cancel    context.CancelFunc

	mu        sync.Mutex
	status    string
	updated   time.Time
	result    Object
	err       *Error
	pending   map[string]InputRequest    // unanswered input requests
	answers   map[string]json.RawMessage // answers not yet consumed
	answered  chan struct{}              // signalled on every tasks/update
	expiresAt time.Time
}

type taskStore struct {
	mu    sync.Mutex
	tasks map[string]*task
}

// enableTasks offers the tasks extension and its methods (once a tool
// supports tasks).
func (s *Server) enableTasks() {
	if s.tasks != nil {
		return
	}
	s.tasks = &taskStore{tasks: map[string]*task{}}
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
func (c *Call) hasExtension(id string) bool {
	var caps struct {
		Extensions map[string]json.RawMessage `json:"extensions"`
	}
	if json.Unmarshal(c.caps, &caps) != nil {
		return false
	}
	v, ok := caps.Extensions[id]
	return ok && string(v) != "null" && string(v) != "false"
}

func missingExtension(id string) *Error {
	return jsonrpc.NewError(CodeMissingCapability, "Missing required client capability: extension "+id,
		Object{"requiredCapabilities": Object{"extensions": Object{id: Object{}}}}).WithStatus(http.StatusBadRequest)
}

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
	ctx, cancel := context.WithCancel(s.baseCtx)
	now := time.Now().UTC()
	t := &task{
		id: newTaskID(), principal: c.principal, created: now, cancel: cancel,
		status: taskWorking, updated: now, answered: make(chan struct{}, 1),
		answers: map[string]json.RawMessage{}, expiresAt: now.Add(taskTTL),
	}
	s.tasks.add(t)
	tc := *c
	// The transport may recycle the request once it is answered: keep
	// nothing of it but the parsed params.
	tc.ctx, tc.out, tc.task, tc.progressToken, tc.header = ctx, nil, t, nil, HeaderMap{}
	go func() {
		defer cancel()
		res, err := runTask(&tc, work)
		t.finish(res, err, s)
	}()
	return &ToolResult{special: Object{
		"resultType":     "task",
		"taskId":         t.id,
		"status":         taskWorking,
		"createdAt":      now.Format(time.RFC3339Nano),
		"lastUpdatedAt":  now.Format(time.RFC3339Nano),
		"ttlMs":          taskTTL.Milliseconds(),
		"pollIntervalMs": taskPollInterval.Milliseconds(),
	}}, nil
}

func runTask(c *Call, work func(*Call) (*ToolResult, error)) (res Object, err error) {
	defer func() {
		if p := recover(); p != nil {
			c.srv.log.Error("mcp: task panic", "task", c.task.id, "panic", p)
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

func (t *task) finish(res Object, err error, s *Server) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.status == taskCancelled {
		return
	}
	t.updated = time.Now().UTC()
	t.pending = nil
	if err != nil {
		t.status = taskFailed
		t.err = s.toError(&Call{method: "tools/call"}, err)
		return
	}
	t.status, t.result = taskCompleted, res
}

// input asks the client for input from inside a task: the task turns
// input_required with the requests until tasks/update has answered every
// key (answers may arrive over several updates; tasks/update does the
// bookkeeping so tasks/get is current as soon as it is acknowledged).
func (c *Call) taskInput(reqs map[string]InputRequest) (map[string]*Answer, error) {
	t := c.task
	t.mu.Lock()
	t.pending = map[string]InputRequest{}
	for k, r := range reqs {
		t.pending[k] = r
	}
	t.answers = map[string]json.RawMessage{}
	t.status, t.updated = taskInputRequired, time.Now().UTC()
	t.mu.Unlock()
	for {
		t.mu.Lock()
		if len(t.pending) == 0 {
			got := map[string]*Answer{}
			for k, v := range t.answers {
				got[k] = &Answer{Result: v, path: "/params/inputResponses/" + scan.PathElem(k) + "/content/"}
			}
			t.answers = map[string]json.RawMessage{}
			t.mu.Unlock()
			return got, nil
		}
		t.mu.Unlock()
		select {
		case <-t.answered:
		case <-c.ctx.Done():
			return nil, c.ctx.Err()
		}
	}
}

func newTaskID() string {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		panic("bug: crypto/rand failed: " + err.Error())
	}
	return "task-" + hex.EncodeToString(b)
}

func (ts *taskStore) add(t *task) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	now := time.Now()
	for id, old := range ts.tasks {
		if now.After(old.expiresAt) {
			old.cancel()
			delete(ts.tasks, id)
		}
	}
	ts.tasks[t.id] = t
}

func (s *Server) lookupTask(c *Call) (*task, error) {
	var id string
	if e := c.param("taskId", &id); e != nil {
		return nil, e
	}
	s.tasks.mu.Lock()
	t := s.tasks.tasks[id]
	s.tasks.mu.Unlock()
	if t == nil || t.principal != c.principal || time.Now().After(t.expiresAt) {
		return nil, jsonrpc.NewError(CodeInvalidParams, fmt.Sprintf("Invalid params: unknown task %q", id), Object{"taskId": id})
	}
	return t, nil
}

func (s *Server) tasksGet(c *Call) (any, error) {
	t, err := s.lookupTask(c)
	if err != nil {
		return nil, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	res := Object{
		"taskId":         t.id,
		"status":         t.status,
		"createdAt":      t.created.Format(time.RFC3339Nano),
		"lastUpdatedAt":  t.updated.Format(time.RFC3339Nano),
		"ttlMs":          taskTTL.Milliseconds(),
		"pollIntervalMs": taskPollInterval.Milliseconds(),
	}
	switch t.status {
	case taskCompleted:
		res["result"] = t.result
	case taskFailed:
		res["error"] = t.err
	case taskInputRequired:
		irs := Object{}
		for k, r := range t.pending {
			irs[k] = Object{"method": r.Method, "params": r.Params}
		}
		res["inputRequests"] = irs
	}
	return res, nil
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
	t.mu.Lock()
	for k, v := range responses {
		if _, pending := t.pending[k]; pending { // unknown keys are ignored
			t.answers[k] = v
			delete(t.pending, k)
		}
	}
	if len(t.pending) == 0 && t.status == taskInputRequired {
		t.status, t.updated = taskWorking, time.Now().UTC()
	}
	t.mu.Unlock()
	select {
	case t.answered <- struct{}{}:
	default:
	}
	return Object{}, nil
}

func (s *Server) tasksCancel(c *Call) (any, error) {
	t, err := s.lookupTask(c)
	if err != nil {
		return nil, err
	}
	t.mu.Lock()
	switch t.status {
	case taskCompleted, taskFailed, taskCancelled:
	default:
		t.status, t.updated, t.pending = taskCancelled, time.Now().UTC(), nil
		t.cancel()
	}
	t.mu.Unlock()
	return Object{}, nil
}
