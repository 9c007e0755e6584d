package mrtr

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/mcpblob/mcpblob/core/mcp/jsonrpc"
	"github.com/mcpblob/mcpblob/core/mcp/scan"
	"github.com/mcpblob/mcpblob/core/token"
)

// Envelope is what a requestState carries.
type Envelope struct {
	State json.RawMessage                     `json:"s,omitempty"` // the handler's progress
	Args  map[string]string                   `json:"a,omitempty"` // argument digests (ArgDigests)
	Files map[string]map[string]scan.FileSpec `json:"f,omitempty"` // x-mcp-file fields by input key
}

// Responses validates params.inputResponses (raw, present when sent): an
// object of objects. Absent, it is nil.
func Responses(raw json.RawMessage, present bool) (map[string]json.RawMessage, *jsonrpc.Error) {
	var m map[string]json.RawMessage
	if present && (string(raw) == "null" || len(raw) == 0 || raw[0] != '{' || json.Unmarshal(raw, &m) != nil) {
		return nil, jsonrpc.InvalidParams("Invalid params: inputResponses must be an object")
	}
	for k, v := range m {
		if len(v) == 0 || v[0] != '{' {
			return nil, jsonrpc.InvalidParams("Invalid params: inputResponses[%q] must be an object", k)
		}
	}
	return m, nil
}

// Sign returns env as a requestState: a token (purpose
// mcp-request-state) bound to the principal and to the request's method
// and name, expiring after ttl.
func Sign(kr *token.Keyring, env *Envelope, principal, method, name string, ttl time.Duration) (string, error) {
	data, err := json.Marshal(env)
	if err != nil {
		return "", err
	}
	return kr.Sign(token.Claims{
		Purpose:   token.PurposeRequestState,
		Principal: principal,
		Object:    method + " " + name,
		Expires:   time.Now().Add(ttl),
		Data:      data,
	})
}

// Verify returns the envelope of a requestState that Sign issued for the
// same principal, method and name and that has not expired; any other
// state is a -32602 error.
func Verify(kr *token.Keyring, state, principal, method, name string) (*Envelope, *jsonrpc.Error) {
	claims, err := kr.Verify(state, token.PurposeRequestState)
	var env Envelope
	if err != nil || claims.Principal != principal || claims.Object != method+" "+name || json.Unmarshal(claims.Data, &env) != nil {
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "Invalid params: requestState failed verification", nil)
	}
	return &env, nil
}

// CheckArgs refuses a retry whose arguments differ from the ones its
// requestState was issued for (want, their ArgDigests).
func CheckArgs(want map[string]string, args map[string]json.RawMessage) *jsonrpc.Error {
	got := ArgDigests(args)
	for _, k := range slices.Sorted(maps.Keys(mergeKeys(want, got))) {
		if want[k] != got[k] {
			return jsonrpc.NewError(jsonrpc.CodeInvalidParams, fmt.Sprintf("Invalid params: argument %q differs from the one the requestState was issued for", k),
				map[string]any{"argument": k})
		}
	}
	return nil
}

func mergeKeys(a, b map[string]string) map[string]bool {
	out := map[string]bool{}
	for k := range a {
		out[k] = true
	}
	for k := range b {
		out[k] = true
	}
	return out
}

// ArgDigests returns a short SHA-256 digest of each argument as sent, nil
// when there are none.
func ArgDigests(args map[string]json.RawMessage) map[string]string {
	if len(args) == 0 {
		return nil
	}
	out := make(map[string]string, len(args))
	for k, v := range args {
		d := sha256.Sum256(v)
		out[k] = hex.EncodeToString(d[:8])
	}
	return out
}

// Load reads a request's params.inputResponses and params.requestState:
// the responses and, when a requestState came, its verified envelope,
// bound to principal, method and name and to the request's args. A
// stateful tool's responses that came without a state are dropped (nil):
// the handler starts over.
func Load(kr *token.Keyring, params, args map[string]json.RawMessage, principal, method, name string, stateful bool) (map[string]json.RawMessage, *Envelope, *jsonrpc.Error) {
	raw, ok := params["inputResponses"]
	m, e := Responses(raw, ok)
	if e != nil {
		return nil, nil, e
	}
	sraw, hasState := params["requestState"]
	if !hasState || string(sraw) == "null" {
		if stateful {
			return nil, nil, nil
		}
		return m, nil, nil
	}
	var rs string
	if json.Unmarshal(sraw, &rs) != nil {
		return nil, nil, jsonrpc.InvalidParams("Invalid params: requestState must be a string")
	}
	env, e := Verify(kr, rs, principal, method, name)
	if e == nil {
		e = CheckArgs(env.Args, args)
	}
	if e != nil {
		return nil, nil, e
	}
	return m, env, nil
}

// Request is one input request of an InputRequiredResult: its method and
// params, and the x-mcp-file fields of an elicited form.
type Request struct {
	Method string
	Params any
	Files  map[string]scan.FileSpec
}

// Required returns an InputRequiredResult for reqs. A requestState is
// signed (see Sign) into it when the handler saved state or a request
// carries file fields; it binds the request's args.
func Required(kr *token.Keyring, reqs map[string]Request, state json.RawMessage, args map[string]json.RawMessage,
	principal, method, name string, ttl time.Duration) (map[string]any, error) {
	irs := map[string]any{}
	env := Envelope{State: state, Args: ArgDigests(args)}
	for k, r := range reqs {
		irs[k] = map[string]any{"method": r.Method, "params": r.Params}
		if r.Files != nil {
			if env.Files == nil {
				env.Files = map[string]map[string]scan.FileSpec{}
			}
			env.Files[k] = r.Files
		}
	}
	res := map[string]any{"resultType": "input_required", "inputRequests": irs}
	if state == nil && env.Files == nil {
		return res, nil
	}
	tok, err := Sign(kr, &env, principal, method, name, ttl)
	if err != nil {
		return nil, err
	}
	res["requestState"] = tok
	return res, nil
}
