package tasks

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"sync"
	"time"

	"github.com/mcpblob/mcpblob/core/mcp/jsonrpc"
)

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

// Task is one task: its status, and its result, error or pending input
// requests as tasks/get shows them.
type Task struct {
	id        string
	principal string
	created   time.Time
	cancel    context.CancelFunc

	mu        sync.Mutex
	status    string
	updated   time.Time
	result    map[string]any
	err       *jsonrpc.Error
	pending   map[string]any             // unanswered input requests ({method, params})
	answers   map[string]json.RawMessage // answers not yet consumed
	answered  chan struct{}              // signalled on every tasks/update
	expiresAt time.Time
}

// New returns a working task of principal with a fresh id; cancel stops
// its work (tasks/cancel, expiry).
func New(principal string, cancel context.CancelFunc) *Task {
	now := time.Now().UTC()
	return &Task{
		id: newTaskID(), principal: principal, created: now, cancel: cancel,
		status: taskWorking, updated: now, answered: make(chan struct{}, 1),
		answers: map[string]json.RawMessage{}, expiresAt: now.Add(taskTTL),
	}
}

// ID is the task's id.
func (t *Task) ID() string { return t.id }

// CreateResult is the CreateTaskResult that answers the tools/call that
// started the task.
func (t *Task) CreateResult() map[string]any {
	return map[string]any{
		"resultType":     "task",
		"taskId":         t.id,
		"status":         taskWorking,
		"createdAt":      t.created.Format(time.RFC3339Nano),
		"lastUpdatedAt":  t.created.Format(time.RFC3339Nano),
		"ttlMs":          taskTTL.Milliseconds(),
		"pollIntervalMs": taskPollInterval.Milliseconds(),
	}
}

// Finish records the work's outcome: its result object, or err as
// toError maps it. A cancelled task keeps its status (toError is not
// called).
func (t *Task) Finish(res map[string]any, err error, toError func(error) *jsonrpc.Error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.status == taskCancelled {
		return
	}
	t.updated = time.Now().UTC()
	t.pending = nil
	if err != nil {
		t.status = taskFailed
		t.err = toError(err)
		return
	}
	t.status, t.result = taskCompleted, res
}

// AwaitInput asks the client for input from inside the task: the task
// turns input_required with the requests (their {method, params} objects
// by key) until Update has answered every key (answers may arrive over
// several updates; Update does the bookkeeping so Get is current as soon
// as it returns). It returns the answers by key, or ctx's error.
func (t *Task) AwaitInput(ctx context.Context, reqs map[string]any) (map[string]json.RawMessage, error) {
	t.mu.Lock()
	t.pending = map[string]any{}
	for k, r := range reqs {
		t.pending[k] = r
	}
	t.answers = map[string]json.RawMessage{}
	t.status, t.updated = taskInputRequired, time.Now().UTC()
	t.mu.Unlock()
	for {
		t.mu.Lock()
		if len(t.pending) == 0 {
			got := t.answers
			t.answers = map[string]json.RawMessage{}
			t.mu.Unlock()
			return got, nil
		}
		t.mu.Unlock()
		select {
		case <-t.answered:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// Get is the tasks/get result.
func (t *Task) Get() map[string]any {
	t.mu.Lock()
	defer t.mu.Unlock()
	res := map[string]any{
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
		irs := map[string]any{}
		for k, r := range t.pending {
			irs[k] = r
		}
		res["inputRequests"] = irs
	}
	return res
}

// Update takes the answers of tasks/update: those to pending requests are
// kept for AwaitInput (unknown keys are ignored), and the task is working
// again once none is pending.
func (t *Task) Update(responses map[string]json.RawMessage) {
	t.mu.Lock()
	for k, v := range responses {
		if _, pending := t.pending[k]; pending {
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
}

// Cancel cancels a task that has not ended (tasks/cancel) and stops its
// work; an ended task is left as it is.
func (t *Task) Cancel() {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch t.status {
	case taskCompleted, taskFailed, taskCancelled:
	default:
		t.status, t.updated, t.pending = taskCancelled, time.Now().UTC(), nil
		t.cancel()
	}
}

func newTaskID() string {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		panic("bug: crypto/rand failed: " + err.Error())
	}
	return "task-" + hex.EncodeToString(b)
}

// Store holds the tasks of this process. The zero value is ready to use.
type Store struct {
	mu    sync.Mutex
	tasks map[string]*Task
}

// Add stores t, first dropping (and cancelling) expired tasks.
func (ts *Store) Add(t *Task) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.tasks == nil {
		ts.tasks = map[string]*Task{}
	}
	now := time.Now()
	for id, old := range ts.tasks {
		if now.After(old.expiresAt) {
			old.cancel()
			delete(ts.tasks, id)
		}
	}
	ts.tasks[t.id] = t
}

// Lookup returns the task id of principal, or nil when there is none (or
// it expired, or another principal created it).
func (ts *Store) Lookup(id, principal string) *Task {
	ts.mu.Lock()
	t := ts.tasks[id]
	ts.mu.Unlock()
	if t == nil || t.principal != principal || time.Now().After(t.expiresAt) {
		return nil
	}
	return t
}
