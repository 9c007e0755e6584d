package conformance

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/mcpblob/mcpblob/core/mcp"
)

// Tools of the tasks-extension scenarios (io.modelcontextprotocol/tasks,
// SEP-2663). A tool with a TaskSupport makes the server offer the extension;
// its handler answers through [mcp.Call.RunAsTask], which runs the work in
// the background when the client negotiated tasks and inline otherwise.

// taskTools are the tools without client input: one synchronous, three
// that run as tasks.
func taskTools() []*mcp.Tool {
	slow := tool("slow_compute", "Sleeps for the given seconds, then answers (task-supporting)",
		schema(object(mcp.Object{"seconds": mcp.Object{"type": "number", "minimum": 0}, "label": str()})), slowCompute)
	slow.TaskSupport = mcp.TaskOptional
	failing := tool("failing_job", "Fails with a tool error after about a second (task required)", noArgs, failingJob)
	failing.TaskSupport = mcp.TaskRequired
	crash := tool("protocol_error_job", "Fails with a protocol error (task-supporting)", noArgs, protocolErrorJob)
	crash.TaskSupport = mcp.TaskOptional
	return []*mcp.Tool{
		tool("greet", "Says hello (synchronous only)", schema(object(mcp.Object{"name": str()}, "name")), greet),
		slow,
		failing,
		crash,
	}
}

func greet(c *mcp.Call) (*mcp.ToolResult, error) {
	return text("Hello, " + stringArg(c, "name") + "!"), nil
}

func slowCompute(c *mcp.Call) (*mcp.ToolResult, error) {
	var secs float64
	_ = json.Unmarshal(c.Arguments()["seconds"], &secs)
	label := stringArg(c, "label")
	return c.RunAsTask(func(tc *mcp.Call) (*mcp.ToolResult, error) {
		t := time.NewTimer(time.Duration(secs * float64(time.Second)))
		defer t.Stop()
		select {
		case <-t.C:
		case <-tc.Context().Done():
			return nil, tc.Context().Err()
		}
		return text(fmt.Sprintf("Computed %s after %gs", label, secs)), nil
	})
}

func failingJob(c *mcp.Call) (*mcp.ToolResult, error) {
	return c.RunAsTask(func(tc *mcp.Call) (*mcp.ToolResult, error) {
		pause(tc, time.Second)
		return mcp.ToolError("The job failed"), nil
	})
}

func protocolErrorJob(c *mcp.Call) (*mcp.ToolResult, error) {
	return c.RunAsTask(func(*mcp.Call) (*mcp.ToolResult, error) {
		return nil, &mcp.Error{Code: mcp.CodeInternalError, Message: "Internal error: the job crashed"}
	})
}

// taskInputTools ask the client for input: inside the task (the client
// answers through tasks/update) when tasks were negotiated, else over SSE
// (2025-11-25) or MRTR (2026-07-28). test_tool_with_task asks first and
// only then becomes a task.
func taskInputTools() []*mcp.Tool {
	confirm := asking("confirm_delete", "Asks for confirmation, then deletes (task-supporting)",
		schema(object(mcp.Object{"filename": str()}, "filename")), confirmDelete)
	confirm.TaskSupport = mcp.TaskOptional
	multi := asking("multi_input", "Asks for two inputs at once (task-supporting)", noArgs, multiInput)
	multi.TaskSupport = mcp.TaskOptional
	named := asking("test_tool_with_task", "Gathers a name (MRTR), then finishes as a task (task required)", noArgs, nameThenTask)
	named.TaskSupport = mcp.TaskRequired
	return []*mcp.Tool{confirm, multi, named}
}

func confirmDelete(c *mcp.Call) (*mcp.ToolResult, error) {
	name := stringArg(c, "filename")
	ask := mcp.Elicit("Delete "+name+"?", object(mcp.Object{"confirm": mcp.Object{"type": "boolean"}}, "confirm"))
	return c.RunAsTask(func(tc *mcp.Call) (*mcp.ToolResult, error) {
		a, err := inputOne(tc, "confirm", ask)
		if err != nil {
			return nil, err
		}
		return text("Deletion of " + name + ": " + elicitSummary(a)), nil
	})
}

func multiInput(c *mcp.Call) (*mcp.ToolResult, error) {
	return c.RunAsTask(func(tc *mcp.Call) (*mcp.ToolResult, error) {
		got, err := tc.Input(map[string]mcp.InputRequest{
			"first":  mcp.Elicit("First input: your name?", field("name")),
			"second": mcp.Elicit("Second input: confirm?", object(mcp.Object{"confirm": mcp.Object{"type": "boolean"}}, "confirm")),
		})
		if err != nil {
			return nil, err
		}
		return text("first: " + elicitSummary(got["first"]) + "; second: " + elicitSummary(got["second"])), nil
	})
}

func nameThenTask(c *mcp.Call) (*mcp.ToolResult, error) {
	a, err := inputOne(c, "user_name", mcp.Elicit("What is your name?", field("name")))
	if err != nil {
		return nil, err
	}
	name := elicitField(a, "name")
	return c.RunAsTask(func(*mcp.Call) (*mcp.ToolResult, error) {
		return text("Hello, " + name + "! (finished as a task)"), nil
	})
}
