package conformance

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpblob/mcpblob/core/mcp"
	"github.com/mcpblob/mcpblob/core/mcp/mcptest"
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

// client is a 2026-07-28 client of s, in memory.
func client(s *mcp.Server) *mcptest.Client {
	c := mcptest.NewInMemory(s).Client(mcptest.Version20260728)
	c.Capabilities = `{"elicitation":{}}`
	return c
}

// TestToolOrder pins the order and shape of tools/list (the golden
// transcripts show the fixture tools in this order).
func TestToolOrder(t *testing.T) {
	s := mcp.NewServer(mcp.Implementation{Name: "test"}, nil)
	defer s.Close()
	Register(s)
	res, err := client(s).Call(context.Background(), "tools/list", "")
	if err != nil || res.Status != 200 {
		t.Fatalf("tools/list: %v %d %s", err, res.Status, res.Body)
	}
	var list struct {
		Tools []map[string]json.RawMessage `json:"tools"`
	}
	if err := json.Unmarshal(res.Result, &list); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range list.Tools {
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

// TestMultiRound runs test_input_required_result_multi_round's three
// rounds: the name given in step 1 reaches round 3 only in the state.
func TestMultiRound(t *testing.T) {
	s := mcp.NewServer(mcp.Implementation{Name: "test"}, nil)
	defer s.Close()
	Register(s)
	answers := map[string]string{"step1": `{"action":"accept","content":{"name":"Ada"}}`,
		"step2": `{"action":"accept","content":{"color":"green"}}`}
	var asked []string
	res, err := client(s).CallToolRounds(context.Background(), "test_input_required_result_multi_round", `{}`,
		func(reqs map[string]mcptest.InputRequest) (string, error) {
			var out []string
			for key := range reqs {
				asked = append(asked, key)
				out = append(out, strconv.Quote(key)+":"+answers[key])
			}
			return "{" + strings.Join(out, ",") + "}", nil
		})
	if err != nil {
		t.Fatal(err)
	}
	tr, err := res.ToolResult()
	if err != nil || tr.InputRequired() || !strings.Contains(tr.Text(), "Hello Ada, your favorite color is green") {
		t.Fatalf("last round: %v %s", err, res.Body)
	}
	if !slices.Equal(asked, []string{"step1", "step2"}) {
		t.Fatalf("asked for %v, want step1 then step2", asked)
	}
}
