package hostile

import (
	"context"
	"encoding/json"
	"net/http"
	"sync/atomic"

	"github.com/mcpblob/mcpblob/core/mcp/mcptest"
)

// Protocol versions of the two eras (docs/protocol.md).
const (
	legacyVersion = "2025-11-25"
	ModernVersion = "2026-07-28"
)

var rpcID atomic.Int64

// RPC is a JSON-RPC request body.
func RPC(method string, params any) []byte {
	m := map[string]any{"jsonrpc": "2.0", "id": rpcID.Add(1), "method": method}
	if params != nil {
		m["params"] = params
	}
	b, err := json.Marshal(m)
	if err != nil {
		panic("bug: rpc body: " + err.Error())
	}
	return b
}

// call is the params of tools/call.
func call(name string, args any) map[string]any {
	return map[string]any{"name": name, "arguments": args}
}

// modern adds the 2026-07-28 _meta (protocol version and client
// capabilities) to params.
func WithMeta(params map[string]any, caps map[string]any) map[string]any {
	if params == nil {
		params = map[string]any{}
	}
	if caps == nil {
		caps = map[string]any{}
	}
	params["_meta"] = map[string]any{
		"io.modelcontextprotocol/protocolVersion":    ModernVersion,
		"io.modelcontextprotocol/clientCapabilities": caps,
		"io.modelcontextprotocol/clientInfo":         map[string]string{"name": "mcpblob-hardening", "version": "1"},
	}
	return params
}

// streamCaps declares resources/stream (SEP-2532) support.
var streamCaps = map[string]any{"resourceStreaming": map[string]any{"maxStreamSize": 1 << 40}}

// mcpReq is a POST /mcp with the headers every era wants.
func (e *Env) mcpReq(ctx context.Context, principal string, body []byte) *http.Request {
	req := e.Request(ctx, http.MethodPost, "/mcp", principal, body)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	return req
}

// legacyReq is a 2025-11-25 request on principal's session (opened with
// caps on first use; "" sends none).
func (e *Env) legacyReq(ctx context.Context, principal string, caps map[string]any, body []byte) *http.Request {
	req := e.mcpReq(ctx, principal, body)
	req.Header.Set("MCP-Protocol-Version", legacyVersion)
	if sid := e.session(ctx, principal, caps); sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
	}
	overrideHeaders(ctx, req)
	return req
}

// ModernReq is a 2026-07-28 request with Mcp-Method and, when name is not
// empty, Mcp-Name.
func (e *Env) ModernReq(ctx context.Context, principal, method, name string, body []byte) *http.Request {
	req := e.mcpReq(ctx, principal, body)
	req.Header.Set("MCP-Protocol-Version", ModernVersion)
	req.Header.Set("Mcp-Method", method)
	if name != "" {
		req.Header.Set("Mcp-Name", mcptest.HeaderValue(name))
	}
	overrideHeaders(ctx, req)
	return req
}

// session returns principal's 2025-11-25 session for caps, opening it on
// first use; its signature is registered as a secret.
func (e *Env) session(ctx context.Context, principal string, caps map[string]any) string {
	capsJSON, _ := json.Marshal(caps)
	name := principal + " " + string(capsJSON)
	e.smu.Lock()
	defer e.smu.Unlock()
	if sid, ok := e.sessions[name]; ok {
		return sid
	}
	c := mcptest.New(e.base()+"/mcp", mcptest.Version20251125)
	c.HTTP = e.HTTP
	if principal != "" {
		c = c.WithBearer(e.apiKeys[principal])
	}
	if caps != nil {
		c.Capabilities = string(capsJSON)
	}
	_ = c.Connect(ctx) // judged by the cases: all that matters here is whether a session opened
	sid := c.Session
	if sid == "" {
		return ""
	}
	e.sec.AddToken("session id", sid)
	e.sessions[name] = sid
	return sid
}

// ForgetSessions drops the cached sessions (after a restart they are still
// valid signed tokens, but the server forgot their state).
func (e *Env) ForgetSessions() {
	e.smu.Lock()
	defer e.smu.Unlock()
	clear(e.sessions)
}
