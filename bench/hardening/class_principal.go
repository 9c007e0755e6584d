package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
)

// formCaps declares form elicitation (request_upload then asks for a data
// URI through an InputRequiredResult in 2026-07-28).
var formCaps = map[string]any{"elicitation": map[string]any{"form": map[string]any{}}}

// principalAbuse uses what alice was given (an upload endpoint, a session,
// an MRTR requestState, her blobs) as bob, and tampered requestStates.
func principalAbuse(ctx context.Context, e *env) []batch {
	tenancy := wantEither
	if e.feats.tenancy {
		tenancy = wantReject
	}
	v1 := []hcase{
		noStore(rawCase("bob reads alice's blob", tenancy, http.MethodGet, "/v1/blobs/"+baseText, "bob", nil)),
		jsonCaseAs("bob mints a link to alice's blob", tenancy, "bob", "/v1/links", map[string]any{"key": baseText}),
		bobDeletes(tenancy),
	}
	u := []hcase{uploadAs("alice's endpoint used with bob's key", wantReject, "bob"), uploadAs("alice's endpoint used with alice's key", wantAccept, "alice")}
	leg := []hcase{sessionAs("alice's session used with bob's key", wantReject, "bob"), sessionAs("alice's session used with no key", wantReject, "")}
	state := e.requestState(ctx)
	mod := []hcase{retryCase("requestState of alice replayed by bob", wantReject, "bob", state)}
	if state != "" {
		for _, m := range e.mutations(state, e.cfg.flips) {
			mod = append(mod, retryCase("requestState "+m.label, wantFor(m), "alice", m.tok))
		}
		mod = append(mod, retryCase("requestState of alice, by alice", wantAccept, "alice", state))
	}
	return []batch{{"wrong principal", sV1, v1}, {"wrong principal", sU, u}, {"wrong principal", sLegacy, leg}, {"wrong principal", sModern, mod}}
}

func jsonCaseAs(name string, w want, principal, path string, v any) hcase {
	return httpCase(name, w, false, func(ctx context.Context, e *env) *http.Request {
		body, _ := json.Marshal(v)
		req := e.request(ctx, http.MethodPost, path, principal, body)
		req.Header.Set("Content-Type", "application/json")
		return req
	})
}

// bobDeletes stores an object as alice and deletes it as bob.
func bobDeletes(w want) hcase {
	return hcase{name: "bob deletes alice's blob", want: w, send: func(ctx context.Context, e *env) *answer {
		key := fmt.Sprintf("hard/owned-%d", next())
		a := do(e.hc, e.request(ctx, http.MethodPut, "/v1/blobs/"+key, "alice", []byte("alice's")))
		if a.status != http.StatusCreated {
			return a
		}
		e.inv.noteStored("alice", a)
		a = do(e.hc, e.request(ctx, http.MethodDelete, "/v1/blobs/"+key, "bob", nil))
		if a.status/100 == 2 {
			e.inv.forget("alice", key)
		}
		return a
	}}
}

// uploadAs uploads through an endpoint alice minted, authenticated as
// principal.
func uploadAs(name string, w want, principal string) hcase {
	return hcase{name: name, want: w, stores: true, as: "alice", send: func(ctx context.Context, e *env) *answer {
		tok := e.mintUpload(ctx, "alice", map[string]any{})
		req := e.request(ctx, http.MethodPut, "/u/"+tok, principal, []byte("principal"))
		req.Header.Set("Content-Type", "text/plain")
		return e.sendHTTP(ctx, req)
	}}
}

// sessionAs sends tools/list on alice's session as principal.
func sessionAs(name string, w want, principal string) hcase {
	c := httpCase(name, w, false, func(ctx context.Context, e *env) *http.Request {
		sid := e.session(ctx, "alice", nil)
		req := e.mcpReq(ctx, principal, rpc("tools/list", map[string]any{}))
		req.Header.Set("MCP-Protocol-Version", legacyVersion)
		req.Header.Set("Mcp-Session-Id", sid)
		return req
	})
	c.wellFormed = true
	return c
}

// requestState starts request_upload as alice in 2026-07-28 and returns
// the state of its InputRequiredResult ("" when there is none).
func (e *env) requestState(ctx context.Context) string {
	body := rpc("tools/call", modern(call("request_upload", map[string]any{}), formCaps))
	a := do(e.hc, e.modernReq(ctx, "alice", "tools/call", "request_upload", body))
	var r struct {
		Result struct {
			RequestState string `json:"requestState"`
		} `json:"result"`
	}
	json.Unmarshal(msgOf(a), &r)
	e.sec.addToken("requestState", r.Result.RequestState)
	return r.Result.RequestState
}

// retryCase retries request_upload as principal with state and an accept
// answer carrying a data URI.
func retryCase(name string, w want, principal, state string) hcase {
	c := httpCase(name, w, true, func(ctx context.Context, e *env) *http.Request {
		p := modern(call("request_upload", map[string]any{}), formCaps)
		p["requestState"] = state
		p["inputResponses"] = map[string]any{"upload": map[string]any{"action": "accept", "content": map[string]any{"file": e.dataURI("text/plain")}}}
		return e.modernReq(ctx, principal, "tools/call", "request_upload", rpc("tools/call", p))
	})
	c.wellFormed, c.as = true, "alice"
	return c
}
