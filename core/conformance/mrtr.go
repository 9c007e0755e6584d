package conformance

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mcpblob/mcpblob/core/mcp"
)

// mrtrTools are the 2026-07-28 input-required-result (MRTR, SEP-2322)
// tools: three single-round ones, then four stateful ones whose rounds
// carry a signed requestState.
func mrtrTools() []*mcp.Tool {
	stateful := func(name, desc string, h mcp.ToolHandler) *mcp.Tool {
		t := asking(name, desc, noArgs, h)
		t.Stateful = true
		return t
	}
	return []*mcp.Tool{
		asking("test_input_required_result_elicitation", "MRTR: asks for a name", noArgs, askName),
		asking("test_input_required_result_sampling", "MRTR: asks the client to sample", noArgs, askCapital),
		asking("test_input_required_result_list_roots", "MRTR: asks for the client's roots", noArgs, askRoots),
		stateful("test_input_required_result_request_state", "MRTR: round-trips a signed requestState",
			confirmed(func(a *mcp.Answer) string { return "state-ok: requestState verified, confirm=" + elicitSummary(a) })),
		stateful("test_input_required_result_multiple_inputs", "MRTR: asks for elicitation, sampling and roots at once", multipleInputs),
		stateful("test_input_required_result_multi_round", "MRTR: two rounds of elicitation with evolving state", multiRound),
		stateful("test_input_required_result_tampered_state", "MRTR: rejects a requestState that fails verification",
			confirmed(func(*mcp.Answer) string { return "state-ok" })),
	}
}

// field is an elicitation form with one required string field.
func field(name string) mcp.Object { return object(mcp.Object{name: str()}, name) }

func askName(c *mcp.Call) (*mcp.ToolResult, error) {
	a, err := inputOne(c, "user_name", mcp.Elicit("What is your name?", field("name")))
	if err != nil {
		return nil, err
	}
	return text("Hello, " + elicitField(a, "name") + "!"), nil
}

func askCapital(c *mcp.Call) (*mcp.ToolResult, error) {
	a, err := inputOne(c, "capital_question", mcp.Sample("What is the capital of France?", 100))
	if err != nil {
		return nil, err
	}
	return text("Sampling response: " + samplingText(a)), nil
}

func askRoots(c *mcp.Call) (*mcp.ToolResult, error) {
	a, err := inputOne(c, "client_roots", mcp.ListRoots())
	if err != nil {
		return nil, err
	}
	var r struct {
		Roots []struct {
			URI string `json:"uri"`
		} `json:"roots"`
	}
	_ = json.Unmarshal(result(a), &r)
	uris := make([]string, 0, len(r.Roots))
	for _, root := range r.Roots {
		uris = append(uris, root.URI)
	}
	return text("Client roots: " + strings.Join(uris, ", ")), nil
}

// rounds is a stateful tool's progress as its requestState carries it:
// {"Round":1} in the first round, {"Name":…,"Round":2} after step 1 of
// test_input_required_result_multi_round.
type rounds struct {
	Round int
	Name  string
}

// firstRound is the state of a stateful tool's first round.
var firstRound = json.RawMessage(`{"Round":1}`)

// startRounds reads a stateful tool's progress: the verified requestState
// of a 2026-07-28 retry, else the first round's, which it saves so the
// first InputRequiredResult carries a requestState.
func startRounds(c *mcp.Call) (rounds, error) {
	var raw json.RawMessage
	if c.Modern() { // 2025-11-25 keeps its rounds in the handler: no requestState to read
		var err error
		if raw, err = c.State(); err != nil {
			return rounds{}, err
		}
	}
	if raw == nil {
		raw = firstRound
		c.SetState(raw)
	}
	var st rounds
	_ = json.Unmarshal(raw, &st)
	return st, nil
}

// confirmed is a stateful tool that asks for one confirmation and
// answers done(answer).
func confirmed(done func(*mcp.Answer) string) mcp.ToolHandler {
	return func(c *mcp.Call) (*mcp.ToolResult, error) {
		if _, err := startRounds(c); err != nil {
			return nil, err
		}
		confirm := object(mcp.Object{"ok": mcp.Object{"type": "boolean"}}, "ok")
		a, err := inputOne(c, "confirm", mcp.Elicit("Please confirm", confirm))
		if err != nil {
			return nil, err
		}
		return text(done(a)), nil
	}
}

// threeInputs asks for a name, a greeting and the client's roots.
func threeInputs() map[string]mcp.InputRequest {
	return map[string]mcp.InputRequest{
		"user_name":    mcp.Elicit("What is your name?", field("name")),
		"greeting":     mcp.Sample("Generate a greeting", 50),
		"client_roots": mcp.ListRoots(),
	}
}

func multipleInputs(c *mcp.Call) (*mcp.ToolResult, error) {
	if _, err := startRounds(c); err != nil {
		return nil, err
	}
	got, err := c.Input(threeInputs())
	if err != nil {
		return nil, err
	}
	return text(fmt.Sprintf("Name: %s; greeting: %s; roots received",
		elicitField(got["user_name"], "name"), samplingText(got["greeting"]))), nil
}

// multiRound asks for a name, then (with the name in its state) for a
// color: two requests in a row in 2025-11-25, two rounds in 2026-07-28.
// There the round that settles step 1 always ends by asking for step 2,
// even when the retry already carries an answer to it (as the old fixture
// did); ending it with AskAgain rather than Input also keeps the state
// just saved.
func multiRound(c *mcp.Call) (*mcp.ToolResult, error) {
	st, err := startRounds(c)
	if err != nil {
		return nil, err
	}
	step2 := map[string]mcp.InputRequest{"step2": mcp.Elicit("Step 2: What is your favorite color?", field("color"))}
	if st.Round < 2 {
		a, err := inputOne(c, "step1", mcp.Elicit("Step 1: What is your name?", field("name")))
		if err != nil {
			return nil, err
		}
		st.Name = elicitField(a, "name")
		next, err := json.Marshal(mcp.Object{"Round": 2, "Name": st.Name})
		if err != nil {
			return nil, fmt.Errorf("conformance: encode state: %w", err)
		}
		c.SetState(next)
		if c.Modern() {
			return nil, c.AskAgain(step2)
		}
	}
	got, err := c.Input(step2)
	if err != nil {
		return nil, err
	}
	return text(fmt.Sprintf("Hello %s, your favorite color is %s", st.Name, elicitField(got["step2"], "color"))), nil
}

// capabilityTools check client capabilities: one asks only for what the
// client declared, one requires sampling up front, one asks while its
// answer streams.
func capabilityTools() []*mcp.Tool {
	missing := tool("test_missing_capability", "Requires the sampling capability", noArgs,
		func(*mcp.Call) (*mcp.ToolResult, error) { return text("The client declared sampling"), nil })
	missing.Requires = []string{"sampling"}
	return []*mcp.Tool{
		asking("test_input_required_result_capabilities", "MRTR: asks only for what the client declared", noArgs, declaredOnly),
		missing,
		both(tool("test_streaming_elicitation", "Asks for input while streaming", noArgs, askName)),
	}
}

// declaredOnly asks for those of threeInputs the client can serve; a
// 2026-07-28 client that declared none gets -32021 for elicitation.
func declaredOnly(c *mcp.Call) (*mcp.ToolResult, error) {
	reqs := map[string]mcp.InputRequest{}
	for k, r := range threeInputs() {
		if c.HasCapability(r.Capability) {
			reqs[k] = r
		}
	}
	if len(reqs) == 0 && c.Modern() {
		if _, err := c.State(); err != nil { // inputResponses and requestState are still checked first
			return nil, err
		}
		return nil, mcp.MissingCapability("elicitation")
	}
	got, err := c.Input(reqs)
	if err != nil {
		return nil, err
	}
	return text(fmt.Sprintf("Received %d input responses", len(got))), nil
}
