package hostile

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/mcpblob/mcpblob/loadtest/hardening/internal/wire"
)

// formCaps declares form elicitation (request_upload then asks for a data
// URI through an InputRequiredResult in 2026-07-28).
var formCaps = map[string]any{"elicitation": map[string]any{"form": map[string]any{}}}

// principalAbuse uses what alice was given (an upload endpoint, a session,
// an MRTR requestState, her blobs) as bob, and tampered requestStates.
func principalAbuse(ctx context.Context, e *Env) []Batch {
	tenancy := WantEither
	if e.tenancy {
		tenancy = WantReject
	}
	v1 := []Case{
		noStore(rawCase("bob reads alice's blob", tenancy, http.MethodGet, "/v1/blobs/"+BaseAlice, "bob", nil)),
		jsonCaseAs("bob mints a link to alice's blob", tenancy, "bob", "/v1/links", map[string]any{"key": BaseAlice}),
		bobDeletes(tenancy),
	}
	u := []Case{uploadAs("alice's endpoint used with bob's key", WantReject, "bob"), uploadAs("alice's endpoint used with alice's key", WantAccept, "alice")}
	leg := []Case{sessionAs("alice's session used with bob's key", WantReject, "bob"), sessionAs("alice's session used with no key", WantReject, "")}
	state := e.requestState(ctx)
	mod := []Case{retryCase("requestState of alice replayed by bob", WantReject, "bob", state)}
	if state != "" {
		for _, m := range e.mutations(state, e.flips) {
			mod = append(mod, retryCase("requestState "+m.label, wantFor(m), "alice", m.tok))
		}
		mod = append(mod, retryCase("requestState of alice, by alice", WantAccept, "alice", state))
	}
	return []Batch{{"wrong principal", V1, v1}, {"wrong principal", U, u}, {"wrong principal", Legacy, leg}, {"wrong principal", Modern, mod}}
}

// jsonCaseAs POSTs v as JSON to a /v1 path as principal.
func jsonCaseAs(name string, w Want, principal, path string, v any) Case {
	return httpCase(name, w, false, func(ctx context.Context, e *Env) *http.Request {
		body, _ := json.Marshal(v)
		req := e.Request(ctx, http.MethodPost, path, principal, body)
		req.Header.Set("Content-Type", "application/json")
		return req
	})
}

// bobDeletes stores an object as alice and deletes it as bob.
func bobDeletes(w Want) Case {
	return Case{Name: "bob deletes alice's blob", Want: w, Send: func(ctx context.Context, e *Env) *wire.Answer {
		key := fmt.Sprintf("hard/owned-%d", next())
		a := wire.Do(e.HTTP, e.Request(ctx, http.MethodPut, "/v1/blobs/"+key, "alice", []byte("alice's")))
		if a.Status != http.StatusCreated {
			return a
		}
		e.inv.NoteStored("alice", a)
		a = wire.Do(e.HTTP, e.Request(ctx, http.MethodDelete, "/v1/blobs/"+key, "bob", nil))
		if a.Status/100 == 2 {
			e.inv.Forget("alice", key)
		}
		return a
	}}
}

// uploadAs uploads through an endpoint alice minted, authenticated as
// principal.
func uploadAs(name string, w Want, principal string) Case {
	return Case{Name: name, Want: w, Stores: true, As: "alice", Send: func(ctx context.Context, e *Env) *wire.Answer {
		tok := e.MintUpload(ctx, "alice", map[string]any{})
		req := e.Request(ctx, http.MethodPut, "/u/"+tok, principal, []byte("principal"))
		req.Header.Set("Content-Type", "text/plain")
		return e.sendHTTP(ctx, req)
	}}
}

// sessionAs sends tools/list on alice's session as principal.
func sessionAs(name string, w Want, principal string) Case {
	c := httpCase(name, w, false, func(ctx context.Context, e *Env) *http.Request {
		sid := e.session(ctx, "alice", nil)
		req := e.mcpReq(ctx, principal, RPC("tools/list", map[string]any{}))
		req.Header.Set("MCP-Protocol-Version", legacyVersion)
		req.Header.Set("Mcp-Session-Id", sid)
		return req
	})
	c.WellFormed = true
	return c
}

// requestState starts request_upload as alice in 2026-07-28 and returns
// the state of its InputRequiredResult ("" when there is none).
func (e *Env) requestState(ctx context.Context) string {
	body := RPC("tools/call", WithMeta(call("request_upload", map[string]any{}), formCaps))
	a := wire.Do(e.HTTP, e.ModernReq(ctx, "alice", "tools/call", "request_upload", body))
	var r struct {
		Result struct {
			RequestState string `json:"requestState"`
		} `json:"result"`
	}
	json.Unmarshal(msgOf(a), &r)
	e.sec.AddToken("requestState", r.Result.RequestState)
	return r.Result.RequestState
}

// retryCase retries request_upload as principal with state and an accept
// answer carrying a data URI.
func retryCase(name string, w Want, principal, state string) Case {
	c := httpCase(name, w, true, func(ctx context.Context, e *Env) *http.Request {
		p := WithMeta(call("request_upload", map[string]any{}), formCaps)
		p["requestState"] = state
		p["inputResponses"] = map[string]any{"upload": map[string]any{"action": "accept", "content": map[string]any{"file": e.dataURI("text/plain")}}}
		return e.ModernReq(ctx, principal, "tools/call", "request_upload", RPC("tools/call", p))
	})
	c.WellFormed, c.As = true, "alice"
	return c
}
