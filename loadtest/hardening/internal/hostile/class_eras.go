package hostile

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"

	"github.com/mcpblob/mcpblob/loadtest/hardening/internal/wire"
)

// eraHeaders is a 2026-07-28 tools/call stat_blob (or upload_file, or
// resources/read) whose headers are then changed: set replaces headers
// (an empty value deletes), add appends more values.
type eraHeaders struct {
	label    string
	want     Want
	tool     string // "" = stat_blob of the baseline blob
	set, add []string
	meta     func(m map[string]any) // edits params._meta
}

func sentinel(s string) string {
	return "=?base64?" + base64.StdEncoding.EncodeToString([]byte(s)) + "?="
}

var eraVariants = []eraHeaders{
	{label: "well-formed", want: WantAccept},
	{label: "no Mcp-Method", want: WantReject, set: []string{"Mcp-Method", ""}},
	{label: "Mcp-Method tools/list for a tools/call", want: WantReject, set: []string{"Mcp-Method", "tools/list"}},
	{label: "Mcp-Method in another case", want: WantReject, set: []string{"Mcp-Method", "Tools/Call"}},
	{label: "Mcp-Method twice", want: WantEither, add: []string{"Mcp-Method", "tools/list"}},
	{label: "no Mcp-Name", want: WantReject, set: []string{"Mcp-Name", ""}},
	{label: "Mcp-Name delete_blob for stat_blob", want: WantReject, set: []string{"Mcp-Name", "delete_blob"}},
	{label: "Mcp-Name sentinel of bad base64", want: WantReject, set: []string{"Mcp-Name", "=?base64?!!!?="}},
	{label: "Mcp-Name sentinel with upper-case markers", want: WantReject, set: []string{"Mcp-Name", "=?BASE64?" + base64.StdEncoding.EncodeToString([]byte("stat_blob")) + "?="}},
	{label: "Mcp-Name as a valid sentinel", want: WantAccept, set: []string{"Mcp-Name", sentinel("stat_blob")}},
	{label: "Mcp-Name twice", want: WantEither, add: []string{"Mcp-Name", "delete_blob"}},
	{label: "Mcp-Param-Blob-Key of another key", want: WantReject, set: []string{"Mcp-Param-Blob-Key", "hard/other"}},
	{label: "no Mcp-Param-Blob-Key", want: WantReject, set: []string{"Mcp-Param-Blob-Key", ""}},
	{label: "Mcp-Param-Blob-Key as a valid sentinel", want: WantAccept, set: []string{"Mcp-Param-Blob-Key", sentinel(BaseText)}},
	{label: "Mcp-Param-Blob-Key sentinel of another key", want: WantReject, set: []string{"Mcp-Param-Blob-Key", sentinel(".mcpblob/token-keys")}},
	{label: "Mcp-Param-Blob-Key twice", want: WantEither, add: []string{"Mcp-Param-Blob-Key", "hard/other"}},
	{label: "Mcp-Param-Blob-Key without a key argument", want: WantReject, tool: "upload_file", set: []string{"Mcp-Param-Blob-Key", "hard/header-only"}},
	{label: "an Mcp-Param header no argument declares", want: WantEither, add: []string{"Mcp-Param-Region", "eu"}},
	{label: "MCP-Protocol-Version 2025-11-25 with 2026-07-28 _meta", want: WantReject, set: []string{"MCP-Protocol-Version", legacyVersion}},
	{label: "no MCP-Protocol-Version", want: WantEither, set: []string{"MCP-Protocol-Version", ""}},
	{label: "unsupported version 2099-01-01", want: WantReject, set: []string{"MCP-Protocol-Version", "2099-01-01"},
		meta: func(m map[string]any) { m["io.modelcontextprotocol/protocolVersion"] = "2099-01-01" }},
	{label: "_meta without clientCapabilities", want: WantReject, meta: func(m map[string]any) { delete(m, "io.modelcontextprotocol/clientCapabilities") }},
	{label: "_meta protocolVersion is a number", want: WantReject, meta: func(m map[string]any) { m["io.modelcontextprotocol/protocolVersion"] = 20260728 }},
	{label: "a garbage Mcp-Session-Id (ignored in this era)", want: WantEither, set: []string{"Mcp-Session-Id", "garbage"}},
	{label: "Accept: text/html", want: WantReject, set: []string{"Accept", "text/html"}},
	{label: "Content-Type: text/plain", want: WantReject, set: []string{"Content-Type", "text/plain"}},
}

func (v eraHeaders) send(ctx context.Context, e *Env) *wire.Answer {
	tool, args := "stat_blob", map[string]any{"key": BaseText}
	if v.tool == "upload_file" {
		tool, args = v.tool, map[string]any{"file": e.dataURI("text/plain")}
	}
	p := WithMeta(call(tool, args), nil)
	if v.meta != nil {
		v.meta(p["_meta"].(map[string]any))
	}
	req := e.ModernReq(ctx, "alice", "tools/call", tool, RPC("tools/call", p))
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

// eraAbuse checks each era's header and transport rules (docs/protocol.md), and
// resources/stream's capability rules (docs/byte-plane.md).
func eraAbuse(ctx context.Context, e *Env) []Batch {
	var mod []Case
	for _, v := range eraVariants {
		mod = append(mod, Case{Name: v.label, Want: v.want, WellFormed: true, Stores: v.tool == "upload_file", Send: v.send})
	}
	noName := readCase(Modern, "resources/read without Mcp-Name", WantReject, "resources/read", "blob:///"+BaseText)
	noName.Send = withHeader(noName.Send, "Mcp-Name", "")
	mod = append(mod, noName,
		noStore(rawCase("GET /mcp in 2026-07-28", WantReject, http.MethodGet, "/mcp", "alice", nil, "MCP-Protocol-Version: "+ModernVersion, "Accept: text/event-stream")),
		modernCase("resources/read with another Mcp-Name", WantReject, false, "resources/read", "blob:///"+BaseBin,
			func(*Env) []byte {
				return RPC("resources/read", WithMeta(map[string]any{"uri": "blob:///" + BaseText}, nil))
			}),
	)
	return []Batch{{"era header rules", Modern, mod}, {"era header rules", Legacy, legacyEraCases()}, {"era header rules", Stream, streamCapCases()}}
}

// legacyEraCases: the session and transport rules of 2025-11-25.
func legacyEraCases() []Case {
	list := func(*Env) []byte { return RPC("tools/list", map[string]any{}) }
	mk := func(label string, w Want, body func(*Env) []byte, name, value string) Case {
		c := legacyCase(label, w, false, false, body)
		if name != "" {
			c.Send = withHeader(c.Send, name, value)
		}
		return c
	}
	return []Case{
		mk("no Mcp-Session-Id after initialize", WantReject, list, "Mcp-Session-Id", ""),
		mk("MCP-Protocol-Version garbage", WantReject, list, "MCP-Protocol-Version", "garbage"),
		mk("Accept: text/html", WantReject, list, "Accept", "text/html"),
		mk("Content-Type: text/plain", WantReject, list, "Content-Type", "text/plain"),
		mk("Content-Type: application/json; charset=utf-16", WantEither, list, "Content-Type", "application/json; charset=utf-16"),
		mk("initialize again on the session", WantEither, func(*Env) []byte {
			return RPC("initialize", map[string]any{"protocolVersion": legacyVersion, "capabilities": map[string]any{}, "clientInfo": map[string]string{"name": "x", "version": "1"}})
		}, "", ""),
		mk("a response to a request never sent", WantEither, func(*Env) []byte { return []byte(`{"jsonrpc":"2.0","id":"never-sent","result":{}}`) }, "", ""),
		mk("notifications/cancelled of an unknown request", WantEither, func(*Env) []byte {
			return []byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"nope"}}`)
		}, "", ""),
		mk("logging/setLevel bogus", WantReject, func(*Env) []byte { return RPC("logging/setLevel", map[string]any{"level": "bogus"}) }, "", ""),
		mk("prompts/get of an unknown prompt", WantReject, func(*Env) []byte { return RPC("prompts/get", map[string]any{"name": "nope"}) }, "", ""),
		mk("server/discover inside a session", WantEither, func(*Env) []byte { return RPC("server/discover", map[string]any{}) }, "", ""),
		noStore(rawCase("DELETE /mcp with a bogus session", WantReject, http.MethodDelete, "/mcp", "alice", nil, "Mcp-Session-Id: bogus", "MCP-Protocol-Version: "+legacyVersion)),
	}
}

// streamCapCases: resources/stream without the capability, over
// maxStreamSize, and with hostile maxStreamSize values.
func streamCapCases() []Case {
	cs := []Case{
		legacyCase("2025 resources/stream without the capability", WantReject, false, false, func(*Env) []byte {
			return RPC("resources/stream", map[string]any{"uri": "blob:///" + BaseText})
		}),
		modernCase("2026 resources/stream without the capability", WantReject, false, "resources/stream", "",
			func(*Env) []byte {
				return RPC("resources/stream", WithMeta(map[string]any{"uri": "blob:///" + BaseText}, nil))
			}),
		readCase(Legacy, "2025 resources/stream of the baseline blob", WantAccept, "resources/stream", "blob:///"+BaseText),
		readCase(Modern, "2026 resources/stream of the baseline blob", WantAccept, "resources/stream", "blob:///"+BaseText),
	}
	for _, size := range []string{"1", "0", "-1", `"big"`, "1e400", "null"} {
		w := WantEither
		if size == "1" {
			w = WantReject
		}
		caps := map[string]any{"resourceStreaming": map[string]any{"maxStreamSize": json.RawMessage(size)}}
		cs = append(cs, modernCase("2026 resources/stream, maxStreamSize "+size, w, false, "resources/stream", "",
			func(*Env) []byte {
				return RPC("resources/stream", WithMeta(map[string]any{"uri": "blob:///" + BaseText}, caps))
			}))
	}
	return cs
}
