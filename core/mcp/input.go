package mcp

// Client input: server-to-client requests in 2025-11-25 and multi
// round-trip requests (MRTR, SEP-2322) in 2026-07-28, behind one call,
// [Call.Input]. In 2025-11-25 it sends each request on the call's SSE
// stream and waits for the answer. In 2026-07-28 it returns the answers the
// retried request carries in inputResponses, or, when some are missing, an
// error that the server turns into an InputRequiredResult: the client
// answers and retries, and the handler runs again from the start. Progress
// across rounds lives in a signed, expiring, principal- and request-bound
// requestState (package mrtr; core/token, purpose mcp-request-state) that
// also binds the call's arguments and the x-mcp-file fields the round
// asked for.

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/mcpblob/mcpblob/core/mcp/mrtr"
	"github.com/mcpblob/mcpblob/core/mcp/scan"
	"github.com/mcpblob/mcpblob/core/mcp/toolargs"
)

// InputRequest is one request for client input: sent as a server-to-client
// request in 2025-11-25, listed in an InputRequiredResult in 2026-07-28.
type InputRequest struct {
	Method     string
	Params     Object
	Capability string // the client capability it needs
}

// Elicit asks the user to fill in a form (elicitation/create). Properties
// of schema with "x-mcp-file" are file fields: their data URIs are decoded
// while they arrive, bounded by the descriptor, and read with Answer.File.
func Elicit(message string, schema Object) InputRequest {
	return InputRequest{Method: "elicitation/create", Capability: "elicitation",
		Params: Object{"message": message, "requestedSchema": schema}}
}

// Sample asks the client for an LLM completion of prompt.
func Sample(prompt string, maxTokens int) InputRequest {
	return InputRequest{Method: "sampling/createMessage", Capability: "sampling", Params: Object{
		"messages":  []any{Object{"role": "user", "content": Object{"type": "text", "text": prompt}}},
		"maxTokens": maxTokens,
	}}
}

// ListRoots asks the client for its roots.
func ListRoots() InputRequest {
	return InputRequest{Method: "roots/list", Params: Object{}, Capability: "roots"}
}

// Answer is the client's answer to one InputRequest.
type Answer struct {
	// Result is the answer's result object as sent.
	Result json.RawMessage
	files  *scan.Files
	path   string // JSON path of the answer's content object
	call   *Call  // whose caller opens file URIs
}

// File returns the file field of an elicitation answer, decoded while it
// arrived (bounded then by the field's descriptor when the server could
// tell, else by the server's limit) and checked now against spec. Its
// errors are those of [Call.File]; a *[FileError] names the field.
func (a *Answer) File(field string, spec FileSpec) (*File, error) {
	var content map[string]json.RawMessage
	var r struct {
		Content map[string]json.RawMessage `json:"content"`
	}
	if json.Unmarshal(a.Result, &r) == nil {
		content = r.Content
	}
	return fileValue(a.call, a.files, a.path+scan.PathElem(field), field, content[field], scan.FileSpec(spec), true)
}

// InputError is an input request the client could not serve (a missing
// capability, an error answer, no answer in time). A tool handler may
// return it as is: the server answers with an isError result.
type InputError struct{ Msg string }

func (e *InputError) Error() string { return e.Msg }

// inputRequired is the 2026-07-28 "ask the client and retry" outcome.
type inputRequired struct{ reqs map[string]InputRequest }

func (e *inputRequired) Error() string { return "mcp: input required" }

// Input asks the client for every request and returns the answers by key.
// In 2026-07-28 a missing answer ends the handler: return the error as it
// is, and the server answers with an InputRequiredResult.
func (c *Call) Input(reqs map[string]InputRequest) (map[string]*Answer, error) {
	if c.task != nil {
		return c.taskInput(reqs)
	}
	if c.modern {
		return c.modernInput(reqs)
	}
	got := map[string]*Answer{}
	for _, k := range slices.Sorted(maps.Keys(reqs)) {
		r := reqs[k]
		if !c.HasCapability(r.Capability) {
			return nil, &InputError{"The client does not support " + r.Capability}
		}
		var expect func(int64)
		if fields := fileFields(r); fields != nil {
			expect = func(id int64) { c.srv.expectFiles(c, id, fields) }
		}
		m, err := c.request(r.Method, r.Params, expect)
		if expect != nil {
			c.srv.forgetFiles(c)
		}
		var limit *Error
		if errors.As(err, &limit) {
			return nil, limit // the pending budget: the protocol's refusal, as it is
		}
		if err != nil {
			return nil, &InputError{fmt.Sprintf("%s failed: %v", r.Method, err)}
		}
		c.answers = append(c.answers, m.Files)
		got[k] = &Answer{Result: m.Result, files: m.Files, path: "/result/content/", call: c}
	}
	return got, nil
}

// AskAgain ends a 2026-07-28 round with the requests, as Input does when
// answers are missing (for a round whose answers did not settle it).
func (c *Call) AskAgain(reqs map[string]InputRequest) error { return &inputRequired{reqs} }

func (c *Call) modernInput(reqs map[string]InputRequest) (map[string]*Answer, error) {
	responses, err := c.inputResponses()
	if err != nil {
		return nil, err
	}
	got := map[string]*Answer{}
	missing := map[string]InputRequest{}
	for k, r := range reqs {
		if v, ok := responses[k]; ok {
			got[k] = &Answer{Result: v, files: c.files, path: "/params/inputResponses/" + scan.PathElem(k) + "/content/", call: c}
		} else {
			missing[k] = r
		}
	}
	if len(missing) > 0 {
		return nil, &inputRequired{missing}
	}
	return got, nil
}

// State returns the handler's progress saved with SetState in an earlier
// round (2026-07-28: read from the verified requestState), or nil.
func (c *Call) State() (json.RawMessage, error) {
	if _, err := c.inputResponses(); err != nil {
		return nil, err
	}
	return c.state, nil
}

// SetState saves the handler's progress for the next round.
func (c *Call) SetState(state json.RawMessage) { c.state = state }

// inputResponses validates params.inputResponses and params.requestState
// once and returns the responses (nil when a stateful tool's retry came
// without its state).
func (c *Call) inputResponses() (map[string]json.RawMessage, error) {
	if !c.inputLoaded {
		c.responses, c.inputErr = c.loadInput()
		c.inputLoaded = true
	}
	return c.responses, c.inputErr
}

func (c *Call) loadInput() (map[string]json.RawMessage, error) {
	m, env, e := mrtr.Load(c.srv.keyring, c.params, c.args, c.principal, c.method, c.nameParam(), c.tool != nil && c.tool.Stateful)
	if e != nil {
		return nil, e
	}
	if env != nil {
		c.state = env.State
	}
	return m, nil
}

// inputRequiredResult builds an InputRequiredResult; a requestState is
// signed when the handler saved state or a request carries file fields.
func (s *Server) inputRequiredResult(c *Call, reqs map[string]InputRequest) (Object, error) {
	mreqs := make(map[string]mrtr.Request, len(reqs))
	for k, r := range reqs {
		mreqs[k] = mrtr.Request{Method: r.Method, Params: r.Params, Files: fileFields(r)}
	}
	return mrtr.Required(s.keyring, mreqs, c.state, c.args, c.principal, c.method, c.nameParam(), s.opts.RequestStateTTL)
}

// fileFields returns the x-mcp-file fields of an elicitation's form.
func fileFields(r InputRequest) map[string]scan.FileSpec {
	if r.Method != "elicitation/create" {
		return nil
	}
	schema, _ := r.Params["requestedSchema"].(Object)
	if schema == nil {
		return nil
	}
	return toolargs.FileSpecs(schema)
}

// inputOutcome turns a handler's input error into its answer: an
// InputRequiredResult, an isError result, or (nil, nil) when err is
// neither.
func (s *Server) inputOutcome(c *Call, err error) (Object, error) {
	var ir *inputRequired
	var ie *InputError
	var fe *FileError
	switch {
	case errors.As(err, &fe):
		return fe.result().object(), nil
	case errors.As(err, &ir):
		if !c.modern {
			return nil, errors.New("mcp: AskAgain outside 2026-07-28")
		}
		return s.inputRequiredResult(c, ir.reqs)
	case errors.As(err, &ie):
		return ToolError("%s", ie.Msg).object(), nil
	}
	return nil, nil
}
