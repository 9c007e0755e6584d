package conformance

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/mcpblob/mcpblob/core/mcp"
)

// contentTools are the 2025-11-25 basics: one per content type, then the
// logging, error and progress tools (in the old registration order, which
// tools/list shows).
func (f *fixtures) contentTools() []*mcp.Tool {
	image := mcp.Image{Data: f.png, MIMEType: "image/png"}
	blocks := func(b ...mcp.Content) mcp.ToolHandler {
		return func(*mcp.Call) (*mcp.ToolResult, error) { return &mcp.ToolResult{Content: b}, nil }
	}
	return []*mcp.Tool{
		tool("test_simple_text", "Returns simple text content", noArgs,
			blocks(mcp.Text{Text: "This is a simple text response for testing."})),
		tool("test_image_content", "Returns image content", noArgs, blocks(image)),
		tool("test_audio_content", "Returns audio content", noArgs,
			blocks(mcp.Audio{Data: f.wav, MIMEType: "audio/wav"})),
		tool("test_embedded_resource", "Returns an embedded resource", noArgs,
			blocks(mcp.EmbeddedResource{URI: "test://embedded-resource", MIMEType: "text/plain",
				Text: "This is an embedded resource content."})),
		tool("test_multiple_content_types", "Returns text, image and resource content", noArgs,
			blocks(mcp.Text{Text: "Multiple content types test:"}, image, mcp.EmbeddedResource{URI: "test://mixed-content-resource",
				MIMEType: "application/json", Text: `{"test":"data","value":123}`})),
		both(tool("test_tool_with_logging", "Sends three log messages while it runs", noArgs, withLogging)),
		tool("test_error_handling", "Always returns a tool error", noArgs, func(*mcp.Call) (*mcp.ToolResult, error) {
			return mcp.ToolError("This tool intentionally returns an error for testing"), nil
		}),
		both(tool("test_tool_with_progress", "Reports progress 0, 50, 100 of 100", noArgs, withProgress)),
	}
}

// both makes t answer over SSE (in both eras), so its notifications reach
// the client.
func both(t *mcp.Tool) *mcp.Tool {
	t.Streams = mcp.StreamAlways
	return t
}

func withLogging(c *mcp.Call) (*mcp.ToolResult, error) {
	c.Log("info", "", "Tool execution started")
	pause(c, 50*time.Millisecond)
	c.Log("info", "", "Tool processing data")
	pause(c, 50*time.Millisecond)
	c.Log("info", "", "Tool execution completed")
	return text("Tool with logging executed successfully"), nil
}

func withProgress(c *mcp.Call) (*mcp.ToolResult, error) {
	for i, p := range []float64{0, 50, 100} {
		if i > 0 {
			pause(c, 50*time.Millisecond)
		}
		c.Progress(p, 100, "")
	}
	return text("Tool with progress executed successfully"), nil
}

// streamTools are the 2026-07-28 logging tool and the SEP-1699
// reconnection tool.
func streamTools() []*mcp.Tool {
	reconnect := tool("test_reconnection",
		"Closes its SSE connection mid-call; the result arrives after the client reconnects (SEP-1699)", noArgs, reconnection)
	reconnect.Streams = mcp.StreamForInput // SEP-1699 polling exists in 2025-11-25 only
	return []*mcp.Tool{
		both(tool("test_logging_tool", "Logs three messages (only when the client set a log level)", noArgs, loggingTool)),
		reconnect,
	}
}

func loggingTool(c *mcp.Call) (*mcp.ToolResult, error) {
	for i := 1; i <= 3; i++ {
		c.Log("info", "test_logging_tool", fmt.Sprintf("Log message %d", i))
		pause(c, 20*time.Millisecond)
	}
	return text("Logging tool finished"), nil
}

func reconnection(c *mcp.Call) (*mcp.ToolResult, error) {
	pause(c, 50*time.Millisecond)
	c.CloseSSEConnection() // the client reconnects with Last-Event-ID (SEP-1699)
	pause(c, 300*time.Millisecond)
	return text("Reconnection test completed"), nil
}

// schemaChangeTools are the JSON Schema 2020-12 echo tool and the tools
// that announce list changes.
func (f *fixtures) schemaChangeTools() []*mcp.Tool {
	hub := f.srv.Hub()
	announce := func(kind mcp.EventKind, msg string) mcp.ToolHandler {
		return func(*mcp.Call) (*mcp.ToolResult, error) {
			hub.Publish(mcp.Event{Kind: kind})
			return text(msg), nil
		}
	}
	return []*mcp.Tool{
		tool("json_schema_2020_12_tool", "Echoes arguments validated by a JSON Schema 2020-12 input schema",
			schema2020(), echoArgs),
		tool("test_trigger_tool_change", "Announces a tools list change", noArgs,
			announce(mcp.ToolListChanged, "Tools list change announced")),
		tool("test_trigger_prompt_change", "Announces a prompts list change", noArgs,
			announce(mcp.PromptListChanged, "Prompts list change announced")),
	}
}

func schema2020() json.RawMessage {
	return schema(mcp.Object{
		"$schema": "https://json-schema.org/draft/2020-12/schema",
		"type":    "object",
		"$defs": mcp.Object{"address": mcp.Object{"$anchor": "addressDef", "type": "object", "properties": mcp.Object{
			"street": str(), "city": str()}}},
		"properties": mcp.Object{
			"name":          str(),
			"address":       mcp.Object{"$ref": "#/$defs/address"},
			"contactMethod": mcp.Object{"type": "string", "enum": []string{"phone", "email"}},
			"phone":         str(),
			"email":         str(),
		},
		"allOf": []any{mcp.Object{"anyOf": []any{mcp.Object{"required": []string{"phone"}}, mcp.Object{"required": []string{"email"}}}}},
		"if": mcp.Object{"properties": mcp.Object{"contactMethod": mcp.Object{"const": "phone"}},
			"required": []string{"contactMethod"}},
		"then":                 mcp.Object{"required": []string{"phone"}},
		"else":                 mcp.Object{"required": []string{"email"}},
		"additionalProperties": false,
	})
}

func echoArgs(c *mcp.Call) (*mcp.ToolResult, error) {
	b, err := json.Marshal(c.Arguments())
	if err != nil {
		return nil, fmt.Errorf("conformance: encode arguments: %w", err)
	}
	return text("Received: " + string(b)), nil
}
