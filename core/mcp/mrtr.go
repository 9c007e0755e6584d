package mcp

// Client input for tools: server-to-client requests in 2025-11-25 and
// multi round-trip requests (MRTR, SEP-2322) in 2026-07-28, where progress
// across rounds lives in a signed, expiring, principal- and request-bound
// requestState (core/token, purpose mcp-request-state). The conformance
// fixtures use it today; request_upload will.

import (
	"encoding/json"
	"fmt"
	"sort"
	"time"

	"github.com/mcpblob/mcpblob/core/token"
)

// inputReq is one request for client input: sent as a server-to-client
// request in 2025-11-25, listed in an InputRequiredResult in 2026-07-28.
type inputReq struct {
	method     string
	params     obj
	capability string
}

func samplingReq(prompt string, maxTokens int) inputReq {
	return inputReq{method: "sampling/createMessage", capability: "sampling", params: obj{
		"messages":  []any{obj{"role": "user", "content": obj{"type": "text", "text": prompt}}},
		"maxTokens": maxTokens,
	}}
}

func elicitReq(message string, schema obj) inputReq {
	return inputReq{method: "elicitation/create", capability: "elicitation", params: obj{"message": message, "requestedSchema": schema}}
}

func elicitSummary(raw json.RawMessage) string {
	var r struct {
		Action  string          `json:"action"`
		Content json.RawMessage `json:"content"`
	}
	_ = json.Unmarshal(raw, &r)
	if r.Content == nil {
		r.Content = json.RawMessage("{}")
	}
	return fmt.Sprintf("action=%s, content=%s", r.Action, r.Content)
}

func elicitField(raw json.RawMessage, field string) string {
	var r struct {
		Content map[string]any `json:"content"`
	}
	_ = json.Unmarshal(raw, &r)
	return fmt.Sprint(r.Content[field])
}

func samplingText(raw json.RawMessage) string {
	var r struct {
		Content struct {
			Text string `json:"text"`
		} `json:"content"`
	}
	_ = json.Unmarshal(raw, &r)
	return r.Content.Text
}

type (
	reqsFn func(c *call, args map[string]json.RawMessage, state json.RawMessage) map[string]inputReq
	// stepFn finishes a round; a non-nil next state asks for another round.
	stepFn func(c *call, got map[string]json.RawMessage, state json.RawMessage) (res obj, next json.RawMessage, err error)
)

// asking builds a single-round tool that needs client input.
func (s *Server) asking(name, desc string, schema obj,
	reqs func(c *call, args map[string]json.RawMessage) map[string]inputReq,
	done func(c *call, args map[string]json.RawMessage, got map[string]json.RawMessage, state json.RawMessage) (obj, error)) *tool {
	return s.newAsker(name, desc, schema, false,
		func(c *call, args map[string]json.RawMessage, _ json.RawMessage) map[string]inputReq {
			return reqs(c, args)
		},
		func(c *call, got map[string]json.RawMessage, state json.RawMessage) (obj, json.RawMessage, error) {
			res, err := done(c, c.args, got, state)
			return res, nil, err
		})
}

// newAsker builds a tool that needs client input. In 2025-11-25 it sends
// each request on the tools/call SSE stream and waits for the answer, round
// after round; in 2026-07-28 it answers with an InputRequiredResult until the
// retried call carries every answer (MRTR), keeping multi-round progress in
// a signed requestState.
func (s *Server) newAsker(name, desc string, schema obj, stateful bool, reqs reqsFn, step stepFn) *tool {
	t := &tool{name: name, def: obj{"description": desc, "inputSchema": schema}, streams: true, stateful: stateful}
	initial := json.RawMessage(nil)
	if stateful {
		initial = json.RawMessage(`{"Round":1}`)
	}
	t.run = func(c *call, args map[string]json.RawMessage) (obj, error) {
		c.args = args
		if c.modern {
			return s.runModern(c, t, args, initial, reqs, step)
		}
		state := initial
		for range 8 {
			rs := reqs(c, args, state)
			got := map[string]json.RawMessage{}
			for _, k := range sortedKeys(rs) {
				r := rs[k]
				if !c.hasCap(r.capability) {
					return toolError("The client does not support %s", r.capability), nil
				}
				res, err := c.request(r.method, r.params)
				if err != nil {
					return toolError("%s failed: %v", r.method, err), nil
				}
				got[k] = res
			}
			res, next, err := step(c, got, state)
			if err != nil || next == nil {
				return res, err
			}
			state = next
		}
		return toolError("too many input rounds"), nil
	}
	return t
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// runModern implements the MRTR side of an asking tool.
func (s *Server) runModern(c *call, t *tool, args map[string]json.RawMessage, initial json.RawMessage, reqs reqsFn, step stepFn) (obj, error) {
	responses, e := inputResponses(c)
	if e != nil {
		return nil, e
	}
	state := initial
	if raw, ok := c.params["requestState"]; ok && string(raw) != "null" {
		var rs string
		if json.Unmarshal(raw, &rs) != nil {
			return nil, invalidParams("Invalid params: requestState must be a string")
		}
		st, e := s.verifyState(c, rs)
		if e != nil {
			return nil, e
		}
		state = st
	} else if t.stateful {
		responses = nil // answers without the state they belong to: start over
	}
	rs := reqs(c, args, state)
	if len(rs) == 0 {
		return nil, missingCapability("elicitation")
	}
	got := map[string]json.RawMessage{}
	missing := map[string]inputReq{}
	for k, r := range rs {
		if v, ok := responses[k]; ok {
			got[k] = v
		} else {
			missing[k] = r
		}
	}
	if len(missing) > 0 {
		return s.inputRequired(c, missing, stateIf(t.stateful, state))
	}
	res, next, err := step(c, got, state)
	if err != nil || next == nil {
		return res, err
	}
	return s.inputRequired(c, reqs(c, args, next), next)
}

func stateIf(ok bool, st json.RawMessage) json.RawMessage {
	if ok {
		return st
	}
	return nil
}

// inputResponses validates params.inputResponses: absent is fine; anything
// but an object of objects is a protocol error (-32602).
func inputResponses(c *call) (map[string]json.RawMessage, *Error) {
	raw, ok := c.params["inputResponses"]
	if !ok {
		return nil, nil
	}
	var m map[string]json.RawMessage
	if string(raw) == "null" || len(raw) == 0 || raw[0] != '{' || json.Unmarshal(raw, &m) != nil {
		return nil, invalidParams("Invalid params: inputResponses must be an object")
	}
	for k, v := range m {
		if len(v) == 0 || v[0] != '{' {
			return nil, invalidParams("Invalid params: inputResponses[%q] must be an object", k)
		}
	}
	return m, nil
}

// inputRequired builds an InputRequiredResult; state, when non-nil, is
// signed into requestState.
func (s *Server) inputRequired(c *call, rs map[string]inputReq, state json.RawMessage) (obj, error) {
	irs := obj{}
	for k, r := range rs {
		irs[k] = obj{"method": r.method, "params": r.params}
	}
	res := obj{"resultType": "input_required", "inputRequests": irs}
	if state != nil {
		tok, err := s.keyring.Sign(token.Claims{
			Purpose:   token.PurposeRequestState,
			Principal: c.principal,
			Object:    c.method + " " + c.nameParam(),
			Expires:   time.Now().Add(s.opts.RequestStateTTL),
			Data:      state,
		})
		if err != nil {
			return nil, err
		}
		res["requestState"] = tok
	}
	return res, nil
}

func (s *Server) verifyState(c *call, state string) (json.RawMessage, *Error) {
	claims, err := s.keyring.Verify(state, token.PurposeRequestState)
	if err != nil || claims.Principal != c.principal || claims.Object != c.method+" "+c.nameParam() {
		return nil, newError(CodeInvalidParams, "Invalid params: requestState failed verification", nil)
	}
	return claims.Data, nil
}

func (c *call) nameParam() string {
	var n string
	_ = json.Unmarshal(c.params["name"], &n)
	return n
}
