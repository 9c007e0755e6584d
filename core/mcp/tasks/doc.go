// Package tasks is the task store of the io.modelcontextprotocol/tasks
// extension (SEP-2663) that package mcp offers in the 2026-07-28 era: a
// [Task]'s state machine (working, input_required, then completed, failed
// or cancelled), the results tasks/get and the CreateTaskResult show, the
// bookkeeping of input requests answered through tasks/update, and a
// [Store] that holds the tasks of this process in memory, bound to the
// principal that created them, for a fixed time to live.
//
// Running a tool as a task, the methods and the extension's negotiation
// stay in package mcp, which imports this package; tasks imports the
// standard library and core/mcp/jsonrpc only, never mcp.
package tasks
