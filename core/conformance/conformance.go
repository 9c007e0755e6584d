package conformance

import (
	"encoding/json"
	"time"

	"github.com/mcpblob/mcpblob/core/mcp"
)

// fixtures is what the fixture handlers share: the server (for its hub)
// and the media they return.
type fixtures struct {
	srv *mcp.Server
	png []byte
	wav []byte
}

// Register adds the fixture tools, resources and prompts to s. Tools are
// added in the order tools/list shows them in the golden transcripts. It
// panics with [mcp.Server.AddTool]'s error when a fixture is refused: a
// name already taken, for instance when called twice on one server.
func Register(s *mcp.Server) {
	f := &fixtures{srv: s, png: fixturePNG(), wav: fixtureWAV()}
	groups := [][]*mcp.Tool{
		f.contentTools(),      // test_simple_text … test_tool_with_progress
		elicitationTools(),    // test_sampling … test_elicitation_sep1330_enums
		mrtrTools(),           // test_input_required_result_elicitation … _tampered_state
		capabilityTools(),     // test_input_required_result_capabilities … test_streaming_elicitation
		streamTools(),         // test_logging_tool, test_reconnection
		taskTools(),           // greet … protocol_error_job
		taskInputTools(),      // confirm_delete, multi_input, test_tool_with_task
		f.schemaChangeTools(), // json_schema_2020_12_tool, test_trigger_*_change
	}
	for _, g := range groups {
		for _, t := range g {
			if err := s.AddTool(t); err != nil {
				panic(err) // the fixtures are fixed: a refusal is a bug here
			}
		}
	}
	f.addResources()
	f.addPrompts()
}

// noArgs is the input schema of tools without arguments.
var noArgs = json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`)

// object is a JSON Schema object type with props and, when given, the
// required property names.
func object(props mcp.Object, required ...string) mcp.Object {
	o := mcp.Object{"type": "object", "properties": props}
	if len(required) > 0 {
		o["required"] = required
	}
	return o
}

// str is a string property, described when desc is given.
func str(desc ...string) mcp.Object {
	o := mcp.Object{"type": "string"}
	if len(desc) > 0 {
		o["description"] = desc[0]
	}
	return o
}

// schema encodes a fixture schema; the values are fixed, so a failure is a
// bug.
func schema(o mcp.Object) json.RawMessage {
	b, err := json.Marshal(o)
	if err != nil {
		panic("bug: conformance: encode schema: " + err.Error())
	}
	return b
}

// tool is a plain fixture tool: a description and an input schema, no
// title (tools/list shows none for the fixtures).
func tool(name, desc string, in json.RawMessage, h mcp.ToolHandler) *mcp.Tool {
	return &mcp.Tool{Name: name, Description: desc, InputSchema: in, Handler: h}
}

// asking is a tool that asks the client for input: it answers over SSE in
// 2025-11-25 so its requests can go out on the call's stream.
func asking(name, desc string, in json.RawMessage, h mcp.ToolHandler) *mcp.Tool {
	t := tool(name, desc, in, h)
	t.Streams = mcp.StreamForInput
	return t
}

// text is a result with one text block.
func text(s string) *mcp.ToolResult {
	return &mcp.ToolResult{Content: []mcp.Content{mcp.Text{Text: s}}}
}

// stringArg is a string argument, "" when absent or not a string.
func stringArg(c *mcp.Call, name string) string {
	var v string
	_ = json.Unmarshal(c.Arguments()[name], &v)
	return v
}

// pause waits d or until the call ends, whichever comes first.
func pause(c *mcp.Call, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-c.Context().Done():
	}
}
