package conformance

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/mcpblob/mcpblob/core/mcp"
)

func TestRegister(t *testing.T) {
	s := mcp.NewServer(mcp.Implementation{Name: "test"}, nil)
	defer s.Close()
	Register(s)
	defer func() {
		p := recover()
		if p == nil || !strings.Contains(fmt.Sprint(p), "duplicate tool") {
			t.Fatalf("second Register: panic %v, want a duplicate tool panic", p)
		}
	}()
	Register(s)
}

// recorder is a ResponseWriter for plain JSON answers.
type recorder struct {
	status int
	body   bytes.Buffer
}

func (r *recorder) SetStatus(code int)       { r.status = code }
func (r *recorder) SetHeader(string, string) {}
func (r *recorder) SetBody(b []byte)         { r.body.Write(b) }
func (r *recorder) SetBodyStream(int64, func(mcp.StreamWriter) error) {
	panic("conformance test: unexpected streamed answer")
}

// post sends a 2026-07-28 request (params without _meta) and returns the
// answer's body.
func post(t *testing.T, s *mcp.Server, method, name, params string) string {
	t.Helper()
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",` +
		`"io.modelcontextprotocol/clientCapabilities":{"elicitation":{}},"io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"}}`
	body := `{"jsonrpc":"2.0","id":1,"method":"` + method + `","params":{` + params + meta + `}}`
	h := mcp.HeaderMap{"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
		"MCP-Protocol-Version": mcp.VersionModern, "Mcp-Method": method}
	if name != "" {
		h["Mcp-Name"] = name
	}
	var w recorder
	s.ServeMCP(&mcp.Request{Method: "POST", Header: h, Body: strings.NewReader(body)}, &w)
	if w.status != 200 {
		t.Fatalf("%s: status %d: %s", method, w.status, w.body.String())
	}
	return w.body.String()
}

// TestToolOrder pins the order and shape of tools/list (the golden
// transcripts show the fixture tools in this order).
func TestToolOrder(t *testing.T) {
	s := mcp.NewServer(mcp.Implementation{Name: "test"}, nil)
	defer s.Close()
	Register(s)
	var res struct {
		Result struct {
			Tools []map[string]json.RawMessage `json:"tools"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(post(t, s, "tools/list", "", "")), &res); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range res.Result.Tools {
		var n string
		_ = json.Unmarshal(tl["name"], &n)
		names = append(names, n)
		if len(tl) != 3 || tl["description"] == nil || tl["inputSchema"] == nil {
			t.Errorf("%s: members %v, want only name, description, inputSchema", n, slices.Sorted(maps.Keys(tl)))
		}
	}
	want := []string{"test_simple_text", "test_image_content", "test_audio_content", "test_embedded_resource",
		"test_multiple_content_types", "test_tool_with_logging", "test_error_handling", "test_tool_with_progress",
		"test_sampling", "test_elicitation", "test_elicitation_sep1034_defaults", "test_elicitation_sep1330_enums",
		"test_input_required_result_elicitation", "test_input_required_result_sampling",
		"test_input_required_result_list_roots", "test_input_required_result_request_state",
		"test_input_required_result_multiple_inputs", "test_input_required_result_multi_round",
		"test_input_required_result_tampered_state", "test_input_required_result_capabilities",
		"test_missing_capability", "test_streaming_elicitation", "test_logging_tool", "test_reconnection",
		"greet", "slow_compute", "failing_job", "protocol_error_job", "confirm_delete", "multi_input",
		"test_tool_with_task", "json_schema_2020_12_tool", "test_trigger_tool_change", "test_trigger_prompt_change"}
	if !slices.Equal(names, want) {
		t.Errorf("tools/list order:\n got %v\nwant %v", names, want)
	}
}

var stateRE = regexp.MustCompile(`"requestState":"([^"]+)"`)

// TestMultiRound runs test_input_required_result_multi_round's three
// rounds: the state saved after step 1 must reach round 3.
func TestMultiRound(t *testing.T) {
	s := mcp.NewServer(mcp.Implementation{Name: "test"}, nil)
	defer s.Close()
	Register(s)
	const tool = "test_input_required_result_multi_round"
	args := `"name":"` + tool + `","arguments":{},`
	rounds := []struct{ responses, want string }{
		{"", `"inputRequests":{"step1":`},
		{`"inputResponses":{"step1":{"action":"accept","content":{"name":"Ada"}}},`, `"inputRequests":{"step2":`},
		{`"inputResponses":{"step2":{"action":"accept","content":{"color":"green"}}},`, `Hello Ada, your favorite color is green`},
	}
	state := ""
	for i, r := range rounds {
		params := args + r.responses
		if state != "" {
			params += `"requestState":"` + state + `",`
		}
		got := post(t, s, "tools/call", tool, params)
		if !strings.Contains(got, r.want) {
			t.Fatalf("round %d: %s\nwant it to contain %s", i+1, got, r.want)
		}
		if m := stateRE.FindStringSubmatch(got); m != nil {
			state = m[1]
		} else if i < 2 {
			t.Fatalf("round %d: no requestState in %s", i+1, got)
		}
	}
}
