package mcp

// Conformance fixtures (Options.ConformanceFixtures): the tools, resources
// and prompts the official conformance suite expects, with the names and
// behaviours of its reference everything-server (SPEC.md §12). They are not
// part of the production surface.

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"strings"
	"time"
)

type fixtures struct {
	srv    *Server
	pngB64 string
	wavB64 string
}

func fixturePNG() []byte {
	img := image.NewRGBA(image.Rect(0, 0, 1, 1))
	img.Set(0, 0, color.RGBA{R: 255, A: 255})
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		panic("bug: png encode: " + err.Error())
	}
	return b.Bytes()
}

// fixtureWAV is 0.1 s of 8 kHz 8-bit mono silence.
func fixtureWAV() []byte {
	const rate, n = 8000, 800
	var b bytes.Buffer
	le := binary.LittleEndian
	b.WriteString("RIFF")
	binary.Write(&b, le, uint32(36+n))
	b.WriteString("WAVEfmt ")
	binary.Write(&b, le, uint32(16))
	binary.Write(&b, le, uint16(1)) // PCM
	binary.Write(&b, le, uint16(1)) // mono
	binary.Write(&b, le, uint32(rate))
	binary.Write(&b, le, uint32(rate)) // byte rate
	binary.Write(&b, le, uint16(1))    // block align
	binary.Write(&b, le, uint16(8))    // bits per sample
	b.WriteString("data")
	binary.Write(&b, le, uint32(n))
	b.Write(bytes.Repeat([]byte{128}, n))
	return b.Bytes()
}

const (
	fxStaticText     = "test://static-text"
	fxStaticBin      = "test://static-binary"
	fxWatched        = "test://watched-resource"
	fxTemplate       = "test://template/{id}/data"
	fxTextContent    = "This is the content of the static text resource."
	fxWatchedContent = "Watched resource content"
)

func (s *Server) registerFixtures() {
	f := &fixtures{
		srv:    s,
		pngB64: base64.StdEncoding.EncodeToString(fixturePNG()),
		wavB64: base64.StdEncoding.EncodeToString(fixtureWAV()),
	}
	s.fixtures = f
	noArgs := obj{"type": "object", "properties": obj{}, "additionalProperties": false}
	strArg := func(name, desc string) obj {
		return obj{"type": "object", "properties": obj{name: obj{"type": "string", "description": desc}}, "required": []string{name}}
	}
	simple := func(name, desc string, run func(c *call, args map[string]json.RawMessage) (obj, error)) *tool {
		return &tool{name: name, def: obj{"description": desc, "inputSchema": noArgs}, run: run}
	}
	add := s.addTool

	add(simple("test_simple_text", "Returns simple text content", func(*call, map[string]json.RawMessage) (obj, error) {
		return obj{"content": []any{textBlock("This is a simple text response for testing.")}}, nil
	}))
	add(simple("test_image_content", "Returns image content", func(*call, map[string]json.RawMessage) (obj, error) {
		return obj{"content": []any{obj{"type": "image", "data": f.pngB64, "mimeType": "image/png"}}}, nil
	}))
	add(simple("test_audio_content", "Returns audio content", func(*call, map[string]json.RawMessage) (obj, error) {
		return obj{"content": []any{obj{"type": "audio", "data": f.wavB64, "mimeType": "audio/wav"}}}, nil
	}))
	add(simple("test_embedded_resource", "Returns an embedded resource", func(*call, map[string]json.RawMessage) (obj, error) {
		return obj{"content": []any{obj{"type": "resource", "resource": obj{
			"uri": "test://embedded-resource", "mimeType": "text/plain", "text": "This is an embedded resource content.",
		}}}}, nil
	}))
	add(simple("test_multiple_content_types", "Returns text, image and resource content", func(*call, map[string]json.RawMessage) (obj, error) {
		return obj{"content": []any{
			textBlock("Multiple content types test:"),
			obj{"type": "image", "data": f.pngB64, "mimeType": "image/png"},
			obj{"type": "resource", "resource": obj{
				"uri": "test://mixed-content-resource", "mimeType": "application/json", "text": `{"test":"data","value":123}`,
			}},
		}}, nil
	}))
	logging := simple("test_tool_with_logging", "Sends three log messages while it runs", func(c *call, _ map[string]json.RawMessage) (obj, error) {
		c.logf("info", "", "Tool execution started")
		sleep(c, 50*time.Millisecond)
		c.logf("info", "", "Tool processing data")
		sleep(c, 50*time.Millisecond)
		c.logf("info", "", "Tool execution completed")
		return obj{"content": []any{textBlock("Tool with logging executed successfully")}}, nil
	})
	logging.streams, logging.streamsModern = true, true
	add(logging)
	add(simple("test_error_handling", "Always returns a tool error", func(*call, map[string]json.RawMessage) (obj, error) {
		return toolError("This tool intentionally returns an error for testing"), nil
	}))
	progress := simple("test_tool_with_progress", "Reports progress 0, 50, 100 of 100", func(c *call, _ map[string]json.RawMessage) (obj, error) {
		for i, p := range []float64{0, 50, 100} {
			if i > 0 {
				sleep(c, 50*time.Millisecond)
			}
			c.progress(p, 100, "")
		}
		return obj{"content": []any{textBlock("Tool with progress executed successfully")}}, nil
	})
	progress.streams, progress.streamsModern = true, true
	add(progress)

	add(s.asking("test_sampling", "Asks the client to sample an LLM completion", strArg("prompt", "The prompt to send to the LLM"),
		func(c *call, args map[string]json.RawMessage) map[string]inputReq {
			prompt, _ := argString(args, "prompt", false)
			return map[string]inputReq{"sampling": samplingReq(prompt, 100)}
		},
		func(c *call, args map[string]json.RawMessage, got map[string]json.RawMessage, _ json.RawMessage) (obj, error) {
			var r struct {
				Content struct {
					Text string `json:"text"`
				} `json:"content"`
			}
			_ = json.Unmarshal(got["sampling"], &r)
			return obj{"content": []any{textBlock("LLM response: " + r.Content.Text)}}, nil
		}))
	add(s.asking("test_elicitation", "Asks the user for a username and email", strArg("message", "The message to show the user"),
		func(c *call, args map[string]json.RawMessage) map[string]inputReq {
			msg, _ := argString(args, "message", false)
			return map[string]inputReq{"elicitation": elicitReq(msg, obj{
				"type": "object",
				"properties": obj{
					"username": obj{"type": "string", "description": "User's response"},
					"email":    obj{"type": "string", "description": "User's email address"},
				},
				"required": []string{"username", "email"},
			})}
		},
		func(c *call, _ map[string]json.RawMessage, got map[string]json.RawMessage, _ json.RawMessage) (obj, error) {
			return obj{"content": []any{textBlock("User response: " + elicitSummary(got["elicitation"]))}}, nil
		}))
	add(s.asking("test_elicitation_sep1034_defaults", "Elicits a form whose fields carry defaults (SEP-1034)", noArgs,
		func(c *call, _ map[string]json.RawMessage) map[string]inputReq {
			return map[string]inputReq{"elicitation": elicitReq("Please review and update the form fields with defaults", obj{
				"type": "object",
				"properties": obj{
					"name":     obj{"type": "string", "description": "User name", "default": "John Doe"},
					"age":      obj{"type": "integer", "description": "User age", "default": 30},
					"score":    obj{"type": "number", "description": "User score", "default": 95.5},
					"status":   obj{"type": "string", "description": "User status", "enum": []string{"active", "inactive", "pending"}, "default": "active"},
					"verified": obj{"type": "boolean", "description": "Verification status", "default": true},
				},
			})}
		},
		func(c *call, _ map[string]json.RawMessage, got map[string]json.RawMessage, _ json.RawMessage) (obj, error) {
			return obj{"content": []any{textBlock("Elicitation completed: " + elicitSummary(got["elicitation"]))}}, nil
		}))
	add(s.asking("test_elicitation_sep1330_enums", "Elicits a form with every enum variant (SEP-1330)", noArgs,
		func(c *call, _ map[string]json.RawMessage) map[string]inputReq {
			return map[string]inputReq{"elicitation": elicitReq("Please select options from the enum fields", obj{
				"type": "object",
				"properties": obj{
					"untitledSingle": obj{"type": "string", "description": "Select one option", "enum": []string{"option1", "option2", "option3"}},
					"titledSingle": obj{"type": "string", "description": "Select one titled option", "oneOf": []any{
						obj{"const": "value1", "title": "First Option"},
						obj{"const": "value2", "title": "Second Option"},
						obj{"const": "value3", "title": "Third Option"},
					}},
					"legacyEnum": obj{"type": "string", "description": "Select one option (legacy)",
						"enum": []string{"opt1", "opt2", "opt3"}, "enumNames": []string{"Option One", "Option Two", "Option Three"}},
					"untitledMulti": obj{"type": "array", "description": "Select multiple options", "minItems": 1, "maxItems": 3,
						"items": obj{"type": "string", "enum": []string{"option1", "option2", "option3"}}},
					"titledMulti": obj{"type": "array", "description": "Select multiple titled options", "minItems": 1, "maxItems": 3,
						"items": obj{"anyOf": []any{
							obj{"const": "value1", "title": "First Choice"},
							obj{"const": "value2", "title": "Second Choice"},
							obj{"const": "value3", "title": "Third Choice"},
						}}},
				},
			})}
		},
		func(c *call, _ map[string]json.RawMessage, got map[string]json.RawMessage, _ json.RawMessage) (obj, error) {
			return obj{"content": []any{textBlock("Elicitation completed: " + elicitSummary(got["elicitation"]))}}, nil
		}))

	// 2026-07-28 extras.
	nameSchema := func(prop string) obj {
		return obj{"type": "object", "properties": obj{prop: obj{"type": "string"}}, "required": []string{prop}}
	}
	add(s.asking("test_input_required_result_elicitation", "MRTR: asks for a name", noArgs,
		func(*call, map[string]json.RawMessage) map[string]inputReq {
			return map[string]inputReq{"user_name": elicitReq("What is your name?", nameSchema("name"))}
		},
		func(c *call, _ map[string]json.RawMessage, got map[string]json.RawMessage, _ json.RawMessage) (obj, error) {
			return obj{"content": []any{textBlock("Hello, " + elicitField(got["user_name"], "name") + "!")}}, nil
		}))
	add(s.asking("test_input_required_result_sampling", "MRTR: asks the client to sample", noArgs,
		func(*call, map[string]json.RawMessage) map[string]inputReq {
			return map[string]inputReq{"capital_question": samplingReq("What is the capital of France?", 100)}
		},
		func(c *call, _ map[string]json.RawMessage, got map[string]json.RawMessage, _ json.RawMessage) (obj, error) {
			return obj{"content": []any{textBlock("Sampling response: " + samplingText(got["capital_question"]))}}, nil
		}))
	add(s.asking("test_input_required_result_list_roots", "MRTR: asks for the client's roots", noArgs,
		func(*call, map[string]json.RawMessage) map[string]inputReq {
			return map[string]inputReq{"client_roots": {method: "roots/list", params: obj{}, capability: "roots"}}
		},
		func(c *call, _ map[string]json.RawMessage, got map[string]json.RawMessage, _ json.RawMessage) (obj, error) {
			var r struct {
				Roots []struct {
					URI string `json:"uri"`
				} `json:"roots"`
			}
			_ = json.Unmarshal(got["client_roots"], &r)
			uris := make([]string, 0, len(r.Roots))
			for _, root := range r.Roots {
				uris = append(uris, root.URI)
			}
			return obj{"content": []any{textBlock("Client roots: " + strings.Join(uris, ", "))}}, nil
		}))
	stateful := func(name, desc string, reqs func(state json.RawMessage) map[string]inputReq, step stepFn) *tool {
		return s.newAsker(name, desc, noArgs, true,
			func(_ *call, _ map[string]json.RawMessage, state json.RawMessage) map[string]inputReq {
				return reqs(state)
			},
			step)
	}
	add(stateful("test_input_required_result_request_state", "MRTR: round-trips a signed requestState",
		func(json.RawMessage) map[string]inputReq {
			return map[string]inputReq{"confirm": elicitReq("Please confirm", obj{
				"type": "object", "properties": obj{"ok": obj{"type": "boolean"}}, "required": []string{"ok"}})}
		},
		func(c *call, got map[string]json.RawMessage, state json.RawMessage) (obj, json.RawMessage, error) {
			return obj{"content": []any{textBlock("state-ok: requestState verified, confirm=" + elicitSummary(got["confirm"]))}}, nil, nil
		}))
	add(stateful("test_input_required_result_multiple_inputs", "MRTR: asks for elicitation, sampling and roots at once",
		func(json.RawMessage) map[string]inputReq {
			return map[string]inputReq{
				"user_name":    elicitReq("What is your name?", nameSchema("name")),
				"greeting":     samplingReq("Generate a greeting", 50),
				"client_roots": {method: "roots/list", params: obj{}, capability: "roots"},
			}
		},
		func(c *call, got map[string]json.RawMessage, state json.RawMessage) (obj, json.RawMessage, error) {
			return obj{"content": []any{textBlock(fmt.Sprintf("Name: %s; greeting: %s; roots received",
				elicitField(got["user_name"], "name"), samplingText(got["greeting"])))}}, nil, nil
		}))
	add(stateful("test_input_required_result_multi_round", "MRTR: two rounds of elicitation with evolving state",
		func(state json.RawMessage) map[string]inputReq {
			var st struct{ Round int }
			_ = json.Unmarshal(state, &st)
			if st.Round >= 2 {
				return map[string]inputReq{"step2": elicitReq("Step 2: What is your favorite color?", nameSchema("color"))}
			}
			return map[string]inputReq{"step1": elicitReq("Step 1: What is your name?", nameSchema("name"))}
		},
		func(c *call, got map[string]json.RawMessage, state json.RawMessage) (obj, json.RawMessage, error) {
			var st struct {
				Round int
				Name  string
			}
			_ = json.Unmarshal(state, &st)
			if st.Round < 2 {
				next, _ := json.Marshal(obj{"Round": 2, "Name": elicitField(got["step1"], "name")})
				return nil, next, nil
			}
			return obj{"content": []any{textBlock(fmt.Sprintf("Hello %s, your favorite color is %s",
				st.Name, elicitField(got["step2"], "color")))}}, nil, nil
		}))
	add(stateful("test_input_required_result_tampered_state", "MRTR: rejects a requestState that fails verification",
		func(json.RawMessage) map[string]inputReq {
			return map[string]inputReq{"confirm": elicitReq("Please confirm", obj{
				"type": "object", "properties": obj{"ok": obj{"type": "boolean"}}, "required": []string{"ok"}})}
		},
		func(c *call, got map[string]json.RawMessage, state json.RawMessage) (obj, json.RawMessage, error) {
			return obj{"content": []any{textBlock("state-ok")}}, nil, nil
		}))
	capsTool := s.asking("test_input_required_result_capabilities", "MRTR: asks only for what the client declared", noArgs,
		func(c *call, _ map[string]json.RawMessage) map[string]inputReq {
			all := map[string]inputReq{
				"user_name":    elicitReq("What is your name?", nameSchema("name")),
				"greeting":     samplingReq("Generate a greeting", 50),
				"client_roots": {method: "roots/list", params: obj{}, capability: "roots"},
			}
			out := map[string]inputReq{}
			for k, r := range all {
				if c.hasCap(r.capability) {
					out[k] = r
				}
			}
			return out
		},
		func(c *call, _ map[string]json.RawMessage, got map[string]json.RawMessage, _ json.RawMessage) (obj, error) {
			return obj{"content": []any{textBlock(fmt.Sprintf("Received %d input responses", len(got)))}}, nil
		})
	capsTool.anyCap = true
	add(capsTool)
	missing := simple("test_missing_capability", "Requires the sampling capability", func(*call, map[string]json.RawMessage) (obj, error) {
		return obj{"content": []any{textBlock("The client declared sampling")}}, nil
	})
	missing.requires = []string{"sampling"}
	add(missing)
	streaming := s.asking("test_streaming_elicitation", "Asks for input while streaming", noArgs,
		func(*call, map[string]json.RawMessage) map[string]inputReq {
			return map[string]inputReq{"user_name": elicitReq("What is your name?", nameSchema("name"))}
		},
		func(c *call, _ map[string]json.RawMessage, got map[string]json.RawMessage, _ json.RawMessage) (obj, error) {
			return obj{"content": []any{textBlock("Hello, " + elicitField(got["user_name"], "name") + "!")}}, nil
		})
	streaming.streamsModern = true
	add(streaming)
	logTool := simple("test_logging_tool", "Logs three messages (only when the client set a log level)", func(c *call, _ map[string]json.RawMessage) (obj, error) {
		for i := 1; i <= 3; i++ {
			c.logf("info", "test_logging_tool", fmt.Sprintf("Log message %d", i))
			sleep(c, 20*time.Millisecond)
		}
		return obj{"content": []any{textBlock("Logging tool finished")}}, nil
	})
	logTool.streams, logTool.streamsModern = true, true
	add(logTool)
	reconnect := simple("test_reconnection", "Closes its SSE connection mid-call; the result arrives after the client reconnects (SEP-1699)",
		func(c *call, _ map[string]json.RawMessage) (obj, error) {
			sleep(c, 50*time.Millisecond)
			if rs, ok := c.out.(*resumable); ok {
				rs.closeConnection()
			}
			sleep(c, 300*time.Millisecond)
			return obj{"content": []any{textBlock("Reconnection test completed")}}, nil
		})
	reconnect.streams = true
	add(reconnect)
	f.registerTaskFixtures(noArgs)
	add(&tool{name: "json_schema_2020_12_tool", def: obj{
		"description": "Echoes arguments validated by a JSON Schema 2020-12 input schema",
		"inputSchema": obj{
			"$schema": "https://json-schema.org/draft/2020-12/schema",
			"type":    "object",
			"$defs": obj{"address": obj{"$anchor": "addressDef", "type": "object", "properties": obj{
				"street": obj{"type": "string"}, "city": obj{"type": "string"}}}},
			"properties": obj{
				"name":          obj{"type": "string"},
				"address":       obj{"$ref": "#/$defs/address"},
				"contactMethod": obj{"type": "string", "enum": []string{"phone", "email"}},
				"phone":         obj{"type": "string"},
				"email":         obj{"type": "string"},
			},
			"allOf":                []any{obj{"anyOf": []any{obj{"required": []string{"phone"}}, obj{"required": []string{"email"}}}}},
			"if":                   obj{"properties": obj{"contactMethod": obj{"const": "phone"}}, "required": []string{"contactMethod"}},
			"then":                 obj{"required": []string{"phone"}},
			"else":                 obj{"required": []string{"email"}},
			"additionalProperties": false,
		}},
		run: func(c *call, args map[string]json.RawMessage) (obj, error) {
			b, _ := json.Marshal(args)
			return obj{"content": []any{textBlock("Received: " + string(b))}}, nil
		},
	})
	add(simple("test_trigger_tool_change", "Announces a tools list change", func(*call, map[string]json.RawMessage) (obj, error) {
		s.hub.Publish(Event{Kind: ToolListChanged})
		return obj{"content": []any{textBlock("Tools list change announced")}}, nil
	}))
	add(simple("test_trigger_prompt_change", "Announces a prompts list change", func(*call, map[string]json.RawMessage) (obj, error) {
		s.hub.Publish(Event{Kind: PromptListChanged})
		return obj{"content": []any{textBlock("Prompts list change announced")}}, nil
	}))
}

func sleep(c *call, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-c.ctx.Done():
	}
}

// Resources.

func (f *fixtures) resources() []any {
	return []any{
		obj{"uri": fxStaticText, "name": "static-text", "title": "Static text", "description": "A static text resource", "mimeType": "text/plain", "size": len(fxTextContent)},
		obj{"uri": fxStaticBin, "name": "static-binary", "title": "Static binary", "description": "A static PNG image", "mimeType": "image/png",
			"size": base64.StdEncoding.DecodedLen(len(f.pngB64)) - strings.Count(f.pngB64, "=")},
		obj{"uri": fxWatched, "name": "watched-resource", "title": "Watched resource", "description": "A resource to subscribe to", "mimeType": "text/plain",
			"size": len(fxWatchedContent)},
	}
}

func (f *fixtures) templates() []any {
	return []any{obj{"uriTemplate": fxTemplate, "name": "template-data", "title": "Template data",
		"description": "A templated JSON resource", "mimeType": "application/json"}}
}

func (f *fixtures) read(c *call, uri string) (any, bool, error) {
	text := func(mt, t string) obj { return obj{"contents": []any{obj{"uri": uri, "mimeType": mt, "text": t}}} }
	switch uri {
	case fxStaticText:
		return text("text/plain", fxTextContent), true, nil
	case fxStaticBin:
		return obj{"contents": []any{obj{"uri": uri, "mimeType": "image/png", "blob": f.pngB64}}}, true, nil
	case fxWatched:
		return text("text/plain", fxWatchedContent), true, nil
	}
	if rest, ok := strings.CutPrefix(uri, "test://template/"); ok {
		if id, ok := strings.CutSuffix(rest, "/data"); ok && id != "" && !strings.Contains(id, "/") {
			b, _ := json.Marshal(obj{"id": id, "templateTest": true, "data": "Data for ID: " + id})
			return text("application/json", string(b)), true, nil
		}
	}
	return nil, false, nil
}

func (f *fixtures) complete(refType, ref, arg, value string) []string {
	switch {
	case refType == "ref/prompt" && ref == "test_prompt_with_arguments":
		return filterPrefix([]string{"paris", "park", "party", "test", "testing"}, value)
	case refType == "ref/resource" && ref == fxTemplate && arg == "id":
		return filterPrefix([]string{"1", "2", "3", "123"}, value)
	}
	return []string{}
}

// Prompts.

func (s *Server) promptsList(c *call) (any, error) {
	var cursor string
	if e := c.param("cursor", &cursor); e != nil {
		return nil, e
	}
	if cursor != "" {
		return nil, invalidParams("Invalid params: invalid cursor")
	}
	arg := func(name, desc string) obj { return obj{"name": name, "description": desc, "required": true} }
	return obj{"prompts": []any{
		obj{"name": "test_simple_prompt", "description": "A simple prompt without arguments"},
		obj{"name": "test_prompt_with_arguments", "description": "A prompt with arguments",
			"arguments": []any{arg("arg1", "First test argument"), arg("arg2", "Second test argument")}},
		obj{"name": "test_prompt_with_embedded_resource", "description": "A prompt with an embedded resource",
			"arguments": []any{arg("resourceUri", "URI of the resource to embed")}},
		obj{"name": "test_prompt_with_image", "description": "A prompt with an image"},
		obj{"name": "test_input_required_result_prompt", "description": "A prompt that asks for input first (MRTR)"},
	}}, nil
}

func (s *Server) promptsGet(c *call) (any, error) {
	var p struct {
		Name      string            `json:"name"`
		Arguments map[string]string `json:"arguments"`
	}
	if e := c.param("name", &p.Name); e != nil {
		return nil, e
	}
	if e := c.param("arguments", &p.Arguments); e != nil {
		return nil, e
	}
	user := func(content obj) obj { return obj{"role": "user", "content": content} }
	f := s.fixtures
	switch p.Name {
	case "test_simple_prompt":
		return obj{"messages": []any{user(textBlock("This is a simple prompt for testing."))}}, nil
	case "test_prompt_with_arguments":
		return obj{"messages": []any{user(textBlock(fmt.Sprintf("Prompt with arguments: arg1='%s', arg2='%s'",
			p.Arguments["arg1"], p.Arguments["arg2"])))}}, nil
	case "test_prompt_with_embedded_resource":
		uri := p.Arguments["resourceUri"]
		if uri == "" {
			return nil, invalidParams("Invalid params: argument resourceUri is required")
		}
		return obj{"messages": []any{
			user(obj{"type": "resource", "resource": obj{"uri": uri, "mimeType": "text/plain", "text": "Embedded resource content for testing."}}),
			user(textBlock("Please process the embedded resource above.")),
		}}, nil
	case "test_prompt_with_image":
		return obj{"messages": []any{
			user(obj{"type": "image", "data": f.pngB64, "mimeType": "image/png"}),
			user(textBlock("Please analyze the image above.")),
		}}, nil
	case "test_input_required_result_prompt":
		if !c.modern {
			return obj{"messages": []any{user(textBlock("This prompt asks for context first in protocol version " + VersionModern + "."))}}, nil
		}
		responses, e := inputResponses(c)
		if e != nil {
			return nil, e
		}
		if v, ok := responses["user_context"]; ok {
			return obj{"messages": []any{user(textBlock("Prompt using context: " + elicitField(v, "context")))}}, nil
		}
		if !c.hasCap("elicitation") {
			return nil, missingCapability("elicitation")
		}
		return s.inputRequired(c, map[string]inputReq{"user_context": elicitReq("What context should the prompt use?",
			obj{"type": "object", "properties": obj{"context": obj{"type": "string"}}, "required": []string{"context"}})}, nil)
	}
	return nil, invalidParams("Invalid params: unknown prompt %q", p.Name)
}

// registerTaskFixtures adds the tools of the tasks-extension scenarios
// (SEP-2663) and enables the task methods.
func (f *fixtures) registerTaskFixtures(noArgs obj) {
	s := f.srv
	s.enableTasks()
	props := func(p obj, required ...string) obj {
		o := obj{"type": "object", "properties": p}
		if len(required) > 0 {
			o["required"] = required
		}
		return o
	}
	s.addTool(&tool{name: "greet", def: obj{"description": "Says hello (synchronous only)",
		"inputSchema": props(obj{"name": obj{"type": "string"}}, "name")},
		run: func(c *call, args map[string]json.RawMessage) (obj, error) {
			name, _ := argString(args, "name", false)
			return obj{"content": []any{textBlock("Hello, " + name + "!")}}, nil
		}})
	s.addTool(&tool{name: "slow_compute", def: obj{"description": "Sleeps for the given seconds, then answers (task-supporting)",
		"inputSchema": props(obj{"seconds": obj{"type": "number", "minimum": 0}, "label": obj{"type": "string"}})},
		run: func(c *call, args map[string]json.RawMessage) (obj, error) {
			var secs float64
			_ = json.Unmarshal(args["seconds"], &secs)
			label, _ := argString(args, "label", false)
			return c.asTask(func(tc *call) (obj, error) {
				t := time.NewTimer(time.Duration(secs * float64(time.Second)))
				defer t.Stop()
				select {
				case <-t.C:
				case <-tc.ctx.Done():
					return nil, tc.ctx.Err()
				}
				return obj{"content": []any{textBlock(fmt.Sprintf("Computed %s after %gs", label, secs))}}, nil
			})
		}})
	s.addTool(&tool{name: "failing_job", taskRequired: true, def: obj{"description": "Fails with a tool error after about a second (task required)",
		"inputSchema": noArgs},
		run: func(c *call, _ map[string]json.RawMessage) (obj, error) {
			return c.asTask(func(tc *call) (obj, error) {
				sleep(tc, time.Second)
				return toolError("The job failed"), nil
			})
		}})
	s.addTool(&tool{name: "protocol_error_job", def: obj{"description": "Fails with a protocol error (task-supporting)",
		"inputSchema": noArgs},
		run: func(c *call, _ map[string]json.RawMessage) (obj, error) {
			return c.asTask(func(tc *call) (obj, error) {
				return nil, newError(CodeInternalError, "Internal error: the job crashed", nil)
			})
		}})
	confirm := func(filename string) inputReq {
		return elicitReq("Delete "+filename+"?", props(obj{"confirm": obj{"type": "boolean"}}, "confirm"))
	}
	withTask := func(t *tool, reqs func(args map[string]json.RawMessage) map[string]inputReq,
		done func(args map[string]json.RawMessage, got map[string]json.RawMessage) obj) *tool {
		sync := t.run
		t.run = func(c *call, args map[string]json.RawMessage) (obj, error) {
			if !c.tasksOK() {
				return sync(c, args)
			}
			return c.asTask(func(tc *call) (obj, error) {
				got, err := tc.input(reqs(args))
				if err != nil {
					return nil, err
				}
				return done(args, got), nil
			})
		}
		return t
	}
	confirmReqs := func(args map[string]json.RawMessage) map[string]inputReq {
		name, _ := argString(args, "filename", false)
		return map[string]inputReq{"confirm": confirm(name)}
	}
	confirmDone := func(args map[string]json.RawMessage, got map[string]json.RawMessage) obj {
		name, _ := argString(args, "filename", false)
		return obj{"content": []any{textBlock("Deletion of " + name + ": " + elicitSummary(got["confirm"]))}}
	}
	s.addTool(withTask(s.asking("confirm_delete", "Asks for confirmation, then deletes (task-supporting)",
		props(obj{"filename": obj{"type": "string"}}, "filename"),
		func(_ *call, args map[string]json.RawMessage) map[string]inputReq { return confirmReqs(args) },
		func(_ *call, args map[string]json.RawMessage, got map[string]json.RawMessage, _ json.RawMessage) (obj, error) {
			return confirmDone(args, got), nil
		}), confirmReqs, confirmDone))
	multiReqs := func(map[string]json.RawMessage) map[string]inputReq {
		return map[string]inputReq{
			"first":  elicitReq("First input: your name?", props(obj{"name": obj{"type": "string"}}, "name")),
			"second": elicitReq("Second input: confirm?", props(obj{"confirm": obj{"type": "boolean"}}, "confirm")),
		}
	}
	multiDone := func(_ map[string]json.RawMessage, got map[string]json.RawMessage) obj {
		return obj{"content": []any{textBlock("first: " + elicitSummary(got["first"]) + "; second: " + elicitSummary(got["second"]))}}
	}
	s.addTool(withTask(s.asking("multi_input", "Asks for two inputs at once (task-supporting)", noArgs,
		func(_ *call, args map[string]json.RawMessage) map[string]inputReq { return multiReqs(args) },
		func(_ *call, args map[string]json.RawMessage, got map[string]json.RawMessage, _ json.RawMessage) (obj, error) {
			return multiDone(args, got), nil
		}), multiReqs, multiDone))
	withTaskTool := s.asking("test_tool_with_task", "Gathers a name (MRTR), then finishes as a task (task required)", noArgs,
		func(*call, map[string]json.RawMessage) map[string]inputReq {
			return map[string]inputReq{"user_name": elicitReq("What is your name?", props(obj{"name": obj{"type": "string"}}, "name"))}
		},
		func(c *call, _ map[string]json.RawMessage, got map[string]json.RawMessage, _ json.RawMessage) (obj, error) {
			name := elicitField(got["user_name"], "name")
			return c.asTask(func(tc *call) (obj, error) {
				return obj{"content": []any{textBlock("Hello, " + name + "! (finished as a task)")}}, nil
			})
		})
	withTaskTool.taskRequired = true
	s.addTool(withTaskTool)
}
