package conformance

import (
	"encoding/json"
	"fmt"

	"github.com/mcpblob/mcpblob/core/mcp"
)

// elicitationTools are the 2025-11-25 tools that ask the client for a
// sampling or a form (in 2026-07-28 they ask through MRTR like the others).
func elicitationTools() []*mcp.Tool {
	return []*mcp.Tool{
		asking("test_sampling", "Asks the client to sample an LLM completion",
			schema(object(mcp.Object{"prompt": str("The prompt to send to the LLM")}, "prompt")), sampling),
		asking("test_elicitation", "Asks the user for a username and email",
			schema(object(mcp.Object{"message": str("The message to show the user")}, "message")), elicitation),
		asking("test_elicitation_sep1034_defaults", "Elicits a form whose fields carry defaults (SEP-1034)", noArgs,
			form(mcp.Elicit("Please review and update the form fields with defaults", defaultsForm()))),
		asking("test_elicitation_sep1330_enums", "Elicits a form with every enum variant (SEP-1330)", noArgs,
			form(mcp.Elicit("Please select options from the enum fields", enumsForm()))),
	}
}

// inputOne asks for one input and returns its answer. A returned error
// goes back to the server as it is (an InputRequiredResult, an isError
// result for a missing client capability, or a protocol error).
func inputOne(c *mcp.Call, key string, r mcp.InputRequest) (*mcp.Answer, error) {
	got, err := c.Input(map[string]mcp.InputRequest{key: r})
	if err != nil {
		return nil, err
	}
	return got[key], nil
}

func sampling(c *mcp.Call) (*mcp.ToolResult, error) {
	a, err := inputOne(c, "sampling", mcp.Sample(stringArg(c, "prompt"), 100))
	if err != nil {
		return nil, err
	}
	return text("LLM response: " + samplingText(a)), nil
}

func elicitation(c *mcp.Call) (*mcp.ToolResult, error) {
	a, err := inputOne(c, "elicitation", mcp.Elicit(stringArg(c, "message"), object(mcp.Object{
		"username": str("User's response"),
		"email":    str("User's email address"),
	}, "username", "email")))
	if err != nil {
		return nil, err
	}
	return text("User response: " + elicitSummary(a)), nil
}

// form asks for one elicitation and reports its summary.
func form(r mcp.InputRequest) mcp.ToolHandler {
	return func(c *mcp.Call) (*mcp.ToolResult, error) {
		a, err := inputOne(c, "elicitation", r)
		if err != nil {
			return nil, err
		}
		return text("Elicitation completed: " + elicitSummary(a)), nil
	}
}

func defaultsForm() mcp.Object {
	return object(mcp.Object{
		"name":     mcp.Object{"type": "string", "description": "User name", "default": "John Doe"},
		"age":      mcp.Object{"type": "integer", "description": "User age", "default": 30},
		"score":    mcp.Object{"type": "number", "description": "User score", "default": 95.5},
		"status":   mcp.Object{"type": "string", "description": "User status", "enum": []string{"active", "inactive", "pending"}, "default": "active"},
		"verified": mcp.Object{"type": "boolean", "description": "Verification status", "default": true},
	})
}

func enumsForm() mcp.Object {
	return object(mcp.Object{
		"untitledSingle": mcp.Object{"type": "string", "description": "Select one option", "enum": []string{"option1", "option2", "option3"}},
		"titledSingle": mcp.Object{"type": "string", "description": "Select one titled option", "oneOf": []any{
			mcp.Object{"const": "value1", "title": "First Option"},
			mcp.Object{"const": "value2", "title": "Second Option"},
			mcp.Object{"const": "value3", "title": "Third Option"},
		}},
		"legacyEnum": mcp.Object{"type": "string", "description": "Select one option (legacy)",
			"enum": []string{"opt1", "opt2", "opt3"}, "enumNames": []string{"Option One", "Option Two", "Option Three"}},
		"untitledMulti": mcp.Object{"type": "array", "description": "Select multiple options", "minItems": 1, "maxItems": 3,
			"items": mcp.Object{"type": "string", "enum": []string{"option1", "option2", "option3"}}},
		"titledMulti": mcp.Object{"type": "array", "description": "Select multiple titled options", "minItems": 1, "maxItems": 3,
			"items": mcp.Object{"anyOf": []any{
				mcp.Object{"const": "value1", "title": "First Choice"},
				mcp.Object{"const": "value2", "title": "Second Choice"},
				mcp.Object{"const": "value3", "title": "Third Choice"},
			}}},
	})
}

// result is an answer's result object as sent (nil for no answer).
func result(a *mcp.Answer) json.RawMessage {
	if a == nil {
		return nil
	}
	return a.Result
}

// elicitSummary is "action=…, content=…" of an elicitation answer, with
// the content as sent ({} when absent).
func elicitSummary(a *mcp.Answer) string {
	var r struct {
		Action  string          `json:"action"`
		Content json.RawMessage `json:"content"`
	}
	_ = json.Unmarshal(result(a), &r)
	if r.Content == nil {
		r.Content = json.RawMessage("{}")
	}
	return fmt.Sprintf("action=%s, content=%s", r.Action, r.Content)
}

// elicitField is one field of an elicitation answer's content, printed
// with fmt ("<nil>" when absent).
func elicitField(a *mcp.Answer, field string) string {
	var r struct {
		Content map[string]any `json:"content"`
	}
	_ = json.Unmarshal(result(a), &r)
	return fmt.Sprint(r.Content[field])
}

// samplingText is the text of a sampling answer.
func samplingText(a *mcp.Answer) string {
	var r struct {
		Content struct {
			Text string `json:"text"`
		} `json:"content"`
	}
	_ = json.Unmarshal(result(a), &r)
	return r.Content.Text
}
