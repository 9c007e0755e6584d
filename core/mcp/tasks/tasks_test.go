package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/mcpblob/mcpblob/core/mcp/jsonrpc"
)

func TestStore(t *testing.T) {
	t.Parallel()
	var s Store
	cancelled := false
	old := New("p", func() { cancelled = true })
	old.expiresAt = time.Now().Add(-time.Second)
	s.Add(old)
	task := New("p", func() {})
	s.Add(task) // sweeps the expired one
	if !cancelled || s.Lookup(old.ID(), "p") != nil {
		t.Fatal("an expired task was kept")
	}
	if s.Lookup(task.ID(), "p") != task || s.Lookup(task.ID(), "q") != nil || s.Lookup("task-none", "p") != nil {
		t.Fatal("Lookup does not bind tasks to their principal")
	}
	if got := task.CreateResult(); got["resultType"] != "task" || got["status"] != "working" || got["taskId"] != task.ID() {
		t.Fatalf("CreateResult = %v", got)
	}
}

func TestInputRounds(t *testing.T) {
	t.Parallel()
	task := New("p", func() {})
	type result struct {
		answers map[string]json.RawMessage
		err     error
	}
	done := make(chan result)
	go func() {
		a, err := task.AwaitInput(context.Background(), map[string]any{"a": map[string]any{"method": "m"}, "b": nil})
		done <- result{a, err}
	}()
	for task.Get()["status"] != "input_required" {
		time.Sleep(time.Millisecond)
	}
	if irs, _ := task.Get()["inputRequests"].(map[string]any); len(irs) != 2 {
		t.Fatalf("inputRequests %v", irs)
	}
	task.Update(map[string]json.RawMessage{"a": json.RawMessage(`{"x":1}`), "zzz": json.RawMessage(`{}`)})
	if got := task.Get(); got["status"] != "input_required" || len(got["inputRequests"].(map[string]any)) != 1 {
		t.Fatalf("after a partial update: %v", got)
	}
	task.Update(map[string]json.RawMessage{"b": json.RawMessage(`{"y":2}`)})
	r := <-done
	if r.err != nil || len(r.answers) != 2 || string(r.answers["a"]) != `{"x":1}` || task.Get()["status"] != "working" {
		t.Fatalf("answers %v, %v; status %v", r.answers, r.err, task.Get()["status"])
	}
	task.Finish(map[string]any{"content": []any{}}, nil, nil)
	if got := task.Get(); got["status"] != "completed" || got["result"] == nil {
		t.Fatalf("finished: %v", got)
	}
}

func TestCancelAndFail(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	task := New("p", cancel)
	task.Cancel()
	if ctx.Err() == nil || task.Get()["status"] != "cancelled" {
		t.Fatal("Cancel did not cancel the work")
	}
	task.Finish(nil, errors.New("late"), func(error) *jsonrpc.Error { t.Fatal("toError called for a cancelled task"); return nil })
	if _, err := task.AwaitInput(ctx, map[string]any{"a": nil}); err == nil {
		t.Fatal("AwaitInput outlived its context")
	}
	failed := New("p", func() {})
	failed.Finish(nil, errors.New("boom"), func(error) *jsonrpc.Error { return jsonrpc.NewError(-32603, "Internal error", nil) })
	if got := failed.Get(); got["status"] != "failed" || got["error"].(*jsonrpc.Error).Code != -32603 {
		t.Fatalf("failed: %v", got)
	}
	failed.Cancel() // an ended task stays as it is
	if failed.Get()["status"] != "failed" {
		t.Fatal("Cancel changed an ended task")
	}
}
