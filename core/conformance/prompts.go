package conformance

import (
	"errors"
	"fmt"

	"github.com/mcpblob/mcpblob/core/mcp"
)

// addPrompts registers the prompts in prompts/list order.
func (f *fixtures) addPrompts() {
	s := f.srv
	arg := func(name, desc string) mcp.PromptArgument {
		return mcp.PromptArgument{Name: name, Description: desc, Required: true}
	}
	s.AddPrompt(&mcp.Prompt{Name: "test_simple_prompt", Description: "A simple prompt without arguments",
		Get: func(*mcp.Call, map[string]string) (mcp.Object, error) {
			return messages(user(mcp.Text{Text: "This is a simple prompt for testing."})), nil
		}})
	s.AddPrompt(&mcp.Prompt{Name: "test_prompt_with_arguments", Description: "A prompt with arguments",
		Arguments: []mcp.PromptArgument{arg("arg1", "First test argument"), arg("arg2", "Second test argument")},
		Get: func(_ *mcp.Call, args map[string]string) (mcp.Object, error) {
			return messages(user(mcp.Text{Text: fmt.Sprintf("Prompt with arguments: arg1='%s', arg2='%s'", args["arg1"], args["arg2"])})), nil
		},
		Complete: func(_ *mcp.Call, _, value string) (mcp.Completion, error) {
			return completion([]string{"paris", "park", "party", "test", "testing"}, value), nil
		}})
	s.AddPrompt(&mcp.Prompt{Name: "test_prompt_with_embedded_resource", Description: "A prompt with an embedded resource",
		Arguments: []mcp.PromptArgument{arg("resourceUri", "URI of the resource to embed")},
		Get:       embeddedPrompt})
	s.AddPrompt(&mcp.Prompt{Name: "test_prompt_with_image", Description: "A prompt with an image",
		Get: func(*mcp.Call, map[string]string) (mcp.Object, error) {
			return messages(
				user(mcp.Image{Data: f.png, MIMEType: "image/png"}),
				user(mcp.Text{Text: "Please analyze the image above."}),
			), nil
		}})
	s.AddPrompt(&mcp.Prompt{Name: "test_input_required_result_prompt", Description: "A prompt that asks for input first (MRTR)",
		Get: contextPrompt})
}

// user is a user message with one content block.
func user(content mcp.Content) mcp.Object { return mcp.Object{"role": "user", "content": content} }

// messages is a GetPromptResult.
func messages(m ...any) mcp.Object { return mcp.Object{"messages": m} }

func embeddedPrompt(_ *mcp.Call, args map[string]string) (mcp.Object, error) {
	uri := args["resourceUri"]
	if uri == "" {
		return nil, mcp.InvalidParams("Invalid params: argument resourceUri is required")
	}
	return messages(
		user(mcp.EmbeddedResource{URI: uri, MIMEType: "text/plain", Text: "Embedded resource content for testing."}),
		user(mcp.Text{Text: "Please process the embedded resource above."}),
	), nil
}

// contextPrompt asks for context by MRTR in 2026-07-28; older clients get
// a message saying so. The order of checks is the old fixture's:
// malformed inputResponses, then a present answer, then the client's
// elicitation capability, then the InputRequiredResult.
func contextPrompt(c *mcp.Call, _ map[string]string) (mcp.Object, error) {
	if !c.Modern() {
		return messages(user(mcp.Text{Text: "This prompt asks for context first in protocol version " + mcp.VersionModern + "."})), nil
	}
	a, err := inputOne(c, "user_context", mcp.Elicit("What context should the prompt use?", field("context")))
	if err != nil {
		var pe *mcp.Error
		if !errors.As(err, &pe) && !c.HasCapability("elicitation") {
			return nil, mcp.MissingCapability("elicitation")
		}
		return nil, err
	}
	return messages(user(mcp.Text{Text: "Prompt using context: " + elicitField(a, "context")})), nil
}
