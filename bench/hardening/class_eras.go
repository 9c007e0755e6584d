package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
)

// eraHeaders is a 2026-07-28 tools/call stat_blob (or upload_file, or
// resources/read) whose headers are then changed: set replaces headers
// (an empty value deletes), add appends more values.
type eraHeaders struct {
	label    string
	want     want
	tool     string // "" = stat_blob of the baseline blob
	set, add []string
	meta     func(m map[string]any) // edits params._meta
}

func sentinel(s string) string {
	return "=?base64?" + base64.StdEncoding.EncodeToString([]byte(s)) + "?="
}

var eraVariants = []eraHeaders{
	{label: "well-formed", want: wantAccept},
	{label: "no Mcp-Method", want: wantReject, set: []string{"Mcp-Method", ""}},
	{label: "Mcp-Method tools/list for a tools/call", want: wantReject, set: []string{"Mcp-Method", "tools/list"}},
	{label: "Mcp-Method in another case", want: wantReject, set: []string{"Mcp-Method", "Tools/Call"}},
	{label: "Mcp-Method twice", want: wantEither, add: []string{"Mcp-Method", "tools/list"}},
	{label: "no Mcp-Name", want: wantReject, set: []string{"Mcp-Name", ""}},
	{label: "Mcp-Name delete_blob for stat_blob", want: wantReject, set: []string{"Mcp-Name", "delete_blob"}},
	{label: "Mcp-Name sentinel of bad base64", want: wantReject, set: []string{"Mcp-Name", "=?base64?!!!?="}},
	{label: "Mcp-Name sentinel with upper-case markers", want: wantReject, set: []string{"Mcp-Name", "=?BASE64?" + base64.StdEncoding.EncodeToString([]byte("stat_blob")) + "?="}},
	{label: "Mcp-Name as a valid sentinel", want: wantAccept, set: []string{"Mcp-Name", sentinel("stat_blob")}},
	{label: "Mcp-Name twice", want: wantEither, add: []string{"Mcp-Name", "delete_blob"}},
	{label: "Mcp-Param-Blob-Key of another key", want: wantReject, set: []string{"Mcp-Param-Blob-Key", "hard/other"}},
	{label: "no Mcp-Param-Blob-Key", want: wantReject, set: []string{"Mcp-Param-Blob-Key", ""}},
	{label: "Mcp-Param-Blob-Key as a valid sentinel", want: wantAccept, set: []string{"Mcp-Param-Blob-Key", sentinel(baseText)}},
	{label: "Mcp-Param-Blob-Key sentinel of another key", want: wantReject, set: []string{"Mcp-Param-Blob-Key", sentinel(".mcpblob/token-keys")}},
	{label: "Mcp-Param-Blob-Key twice", want: wantEither, add: []string{"Mcp-Param-Blob-Key", "hard/other"}},
	{label: "Mcp-Param-Blob-Key without a key argument", want: wantReject, tool: "upload_file", set: []string{"Mcp-Param-Blob-Key", "hard/header-only"}},
	{label: "an Mcp-Param header no argument declares", want: wantEither, add: []string{"Mcp-Param-Region", "eu"}},
	{label: "MCP-Protocol-Version 2025-11-25 with 2026-07-28 _meta", want: wantReject, set: []string{"MCP-Protocol-Version", legacyVersion}},
	{label: "no MCP-Protocol-Version", want: wantEither, set: []string{"MCP-Protocol-Version", ""}},
	{label: "unsupported version 2099-01-01", want: wantReject, set: []string{"MCP-Protocol-Version", "2099-01-01"},
		meta: func(m map[string]any) { m["io.modelcontextprotocol/protocolVersion"] = "2099-01-01" }},
	{label: "_meta without clientCapabilities", want: wantReject, meta: func(m map[string]any) { delete(m, "io.modelcontextprotocol/clientCapabilities") }},
	{label: "_meta protocolVersion is a number", want: wantReject, meta: func(m map[string]any) { m["io.modelcontextprotocol/protocolVersion"] = 20260728 }},
	{label: "a garbage Mcp-Session-Id (ignored in this era)", want: wantEither, set: []string{"Mcp-Session-Id", "garbage"}},
	{label: "Accept: text/html", want: wantReject, set: []string{"Accept", "text/html"}},
	{label: "Content-Type: text/plain", want: wantReject, set: []string{"Content-Type", "text/plain"}},
}

func (v eraHeaders) send(ctx context.Context, e *env) *answer {
	tool, args := "stat_blob", map[string]any{"key": baseText}
	if v.tool == "upload_file" {
		tool, args = v.tool, map[string]any{"file": e.dataURI("text/plain")}
	}
	p := modern(call(tool, args), nil)
	if v.meta != nil {
		v.meta(p["_meta"].(map[string]any))
	}
	req := e.modernReq(ctx, "alice", "tools/call", tool, rpc("tools/call", p))
	if k, ok := args["key"].(string); ok {
		req.Header.Set("Mcp-Param-Blob-Key", k)
	}
	for i := 0; i+1 < len(v.set); i += 2 {
		if v.set[i+1] == "" {
			req.Header.Del(v.set[i])
		} else {
			req.Header.Set(v.set[i], v.set[i+1])
		}
	}
	for i := 0; i+1 < len(v.add); i += 2 {
		req.Header.Add(v.add[i], v.add[i+1])
	}
	return e.sendHTTP(ctx, req)
}

// eraAbuse checks each era's header and transport rules (SPEC.md §2), and
// resources/stream's capability rules (docs/byte-plane.md).
func eraAbuse(ctx context.Context, e *env) []batch {
	var mod []hcase
	for _, v := range eraVariants {
		mod = append(mod, hcase{name: v.label, want: v.want, wellFormed: true, stores: v.tool == "upload_file", send: v.send})
	}
	noName := readCase(sModern, "resources/read without Mcp-Name", wantReject, "resources/read", "blob:///"+baseText)
	noName.send = dropHeader(noName.send, "Mcp-Name")
	mod = append(mod, noName,
		noStore(rawCase("GET /mcp in 2026-07-28", wantReject, http.MethodGet, "/mcp", "alice", nil, "MCP-Protocol-Version: "+modernVersion, "Accept: text/event-stream")),
		modernCase("resources/read with another Mcp-Name", wantReject, false, "resources/read", "blob:///"+baseBin,
			func(*env) []byte {
				return rpc("resources/read", modern(map[string]any{"uri": "blob:///" + baseText}, nil))
			}),
	)
	return []batch{{"era header rules", sModern, mod}, {"era header rules", sLegacy, legacyEraCases()}, {"era header rules", sStream, streamCapCases()}}
}

// dropHeader makes send go without header name.
func dropHeader(send func(context.Context, *env) *answer, name string) func(context.Context, *env) *answer {
	return func(ctx context.Context, e *env) *answer { return withHeader(ctx, e, send, name, "") }
}

// legacyEraCases: the session and transport rules of 2025-11-25.
func legacyEraCases() []hcase {
	list := func(*env) []byte { return rpc("tools/list", map[string]any{}) }
	mk := func(label string, w want, body func(*env) []byte, name, value string) hcase {
		c := legacyCase(label, w, false, false, body)
		if name != "" {
			c.send = func(send func(context.Context, *env) *answer) func(context.Context, *env) *answer {
				return func(ctx context.Context, e *env) *answer { return withHeader(ctx, e, send, name, value) }
			}(c.send)
		}
		return c
	}
	return []hcase{
		mk("no Mcp-Session-Id after initialize", wantReject, list, "Mcp-Session-Id", ""),
		mk("MCP-Protocol-Version garbage", wantReject, list, "MCP-Protocol-Version", "garbage"),
		mk("Accept: text/html", wantReject, list, "Accept", "text/html"),
		mk("Content-Type: text/plain", wantReject, list, "Content-Type", "text/plain"),
		mk("Content-Type: application/json; charset=utf-16", wantEither, list, "Content-Type", "application/json; charset=utf-16"),
		mk("initialize again on the session", wantEither, func(*env) []byte {
			return rpc("initialize", map[string]any{"protocolVersion": legacyVersion, "capabilities": map[string]any{}, "clientInfo": map[string]string{"name": "x", "version": "1"}})
		}, "", ""),
		mk("a response to a request never sent", wantEither, func(*env) []byte { return []byte(`{"jsonrpc":"2.0","id":"never-sent","result":{}}`) }, "", ""),
		mk("notifications/cancelled of an unknown request", wantEither, func(*env) []byte {
			return []byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"nope"}}`)
		}, "", ""),
		mk("logging/setLevel bogus", wantReject, func(*env) []byte { return rpc("logging/setLevel", map[string]any{"level": "bogus"}) }, "", ""),
		mk("prompts/get of an unknown prompt", wantReject, func(*env) []byte { return rpc("prompts/get", map[string]any{"name": "nope"}) }, "", ""),
		mk("server/discover inside a session", wantEither, func(*env) []byte { return rpc("server/discover", map[string]any{}) }, "", ""),
		noStore(rawCase("DELETE /mcp with a bogus session", wantReject, http.MethodDelete, "/mcp", "alice", nil, "Mcp-Session-Id: bogus", "MCP-Protocol-Version: "+legacyVersion)),
	}
}

// streamCapCases: resources/stream without the capability, over
// maxStreamSize, and with hostile maxStreamSize values.
func streamCapCases() []hcase {
	cs := []hcase{
		legacyCase("2025 resources/stream without the capability", wantReject, false, false, func(*env) []byte {
			return rpc("resources/stream", map[string]any{"uri": "blob:///" + baseText})
		}),
		modernCase("2026 resources/stream without the capability", wantReject, false, "resources/stream", "",
			func(*env) []byte {
				return rpc("resources/stream", modern(map[string]any{"uri": "blob:///" + baseText}, nil))
			}),
		readCase(sLegacy, "2025 resources/stream of the baseline blob", wantAccept, "resources/stream", "blob:///"+baseText),
		readCase(sModern, "2026 resources/stream of the baseline blob", wantAccept, "resources/stream", "blob:///"+baseText),
	}
	for _, size := range []string{"1", "0", "-1", `"big"`, "1e400", "null"} {
		w := wantEither
		if size == "1" {
			w = wantReject
		}
		caps := map[string]any{"resourceStreaming": map[string]any{"maxStreamSize": json.RawMessage(size)}}
		cs = append(cs, modernCase("2026 resources/stream, maxStreamSize "+size, w, false, "resources/stream", "",
			func(*env) []byte {
				return rpc("resources/stream", modern(map[string]any{"uri": "blob:///" + baseText}, caps))
			}))
	}
	return cs
}
