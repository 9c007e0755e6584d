package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// rpcBody is a hand-written /mcp body. In it {P} is the params object of
// the era (with _meta in 2026-07-28), {M} is just the era's _meta member
// (`"_meta":{…},` or nothing) for params written out in full, and {K} a
// fresh key.
type rpcBody struct {
	label      string
	method     string // for Mcp-Method in 2026-07-28
	name       string // for Mcp-Name ("" = none)
	body       string
	wellFormed bool
	want       want
}

func nest(open, close string, n int) string {
	return strings.Repeat(open, n) + strings.Repeat(close, n)
}

var rpcBodies = []rpcBody{
	{"duplicate id", "tools/list", "", `{"jsonrpc":"2.0","id":1,"id":2,"method":"tools/list","params":{P}}`, true, wantEither},
	{"duplicate method", "tools/list", "", `{"jsonrpc":"2.0","id":1,"method":"tools/list","method":"tools/call","params":{P}}`, true, wantEither},
	{"duplicate key argument", "tools/call", "upload_file",
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{M}"name":"upload_file","arguments":{"key":"{K}","key":"{K}-b","file":"data:text/plain;base64,QUJD"}}}`, true, wantEither},
	{"duplicate arguments", "tools/call", "stat_blob",
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{M}"name":"stat_blob","arguments":{"key":"` + baseText + `"},"arguments":{"key":".mcpblob/token-keys"}}}`, true, wantEither},
	{"params nested 10,000 deep", "tools/list", "", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{{M}"x":` + nest("[", "]", 10000) + `}}`, true, wantEither},
	{"argument nested 10,000 deep", "tools/call", "stat_blob",
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{M}"name":"stat_blob","arguments":{"key":` + strings.Repeat(`{"a":`, 10000) + `1` + strings.Repeat("}", 10000) + `}}}`, true, wantReject},
	{"id nested 10,000 deep", "tools/list", "", `{"jsonrpc":"2.0","id":` + nest("[", "]", 10000) + `,"method":"tools/list","params":{P}}`, true, wantReject},
	{"params nested 100,000 deep", "tools/list", "", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{{M}"x":` + nest("[", "]", 100000) + `}}`, true, wantEither},
	{"empty batch", "tools/list", "", `[]`, true, wantReject},
	{"batch of one", "tools/list", "", `[{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{P}}]`, true, wantReject},
	{"batch of two", "tools/list", "", `[{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{P}},{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{P}}]`, true, wantReject},
	{"id is an object", "tools/list", "", `{"jsonrpc":"2.0","id":{},"method":"tools/list","params":{P}}`, true, wantReject},
	{"id is true", "tools/list", "", `{"jsonrpc":"2.0","id":true,"method":"tools/list","params":{P}}`, true, wantReject},
	{"id is null", "tools/list", "", `{"jsonrpc":"2.0","id":null,"method":"tools/list","params":{P}}`, true, wantEither},
	{"method is a number", "tools/list", "", `{"jsonrpc":"2.0","id":1,"method":1,"params":{P}}`, true, wantReject},
	{"method is empty", "tools/list", "", `{"jsonrpc":"2.0","id":1,"method":"","params":{P}}`, true, wantReject},
	{"method with NUL", "tools/list", "", `{"jsonrpc":"2.0","id":1,"method":"tools/list\u0000","params":{P}}`, true, wantReject},
	{"params is an array", "tools/list", "", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":[]}`, true, wantReject},
	{"params is a string", "tools/list", "", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":"x"}`, true, wantReject},
	{"jsonrpc 1.0", "tools/list", "", `{"jsonrpc":"1.0","id":1,"method":"tools/list","params":{P}}`, true, wantReject},
	{"jsonrpc missing", "tools/list", "", `{"id":1,"method":"tools/list","params":{P}}`, true, wantReject},
	{"jsonrpc is a number", "tools/list", "", `{"jsonrpc":2.0,"id":1,"method":"tools/list","params":{P}}`, true, wantReject},
	{"tool name is a number", "tools/call", "1", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{M}"name":1,"arguments":{}}}`, true, wantReject},
	{"tools/call without name", "tools/call", "", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{M}"arguments":{}}}`, true, wantReject},
	{"unknown tool", "tools/call", "no_such_tool", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{M}"name":"no_such_tool","arguments":{}}}`, true, wantReject},
	{"arguments is an array", "tools/call", "stat_blob", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{M}"name":"stat_blob","arguments":[]}}`, true, wantReject},
	{"key is a number", "tools/call", "stat_blob", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{M}"name":"stat_blob","arguments":{"key":1}}}`, true, wantReject},
	{"key is null", "tools/call", "stat_blob", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{M}"name":"stat_blob","arguments":{"key":null}}}`, true, wantReject},
	{"unknown argument (additionalProperties false)", "tools/call", "stat_blob",
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{M}"name":"stat_blob","arguments":{"key":"` + baseText + `","bogus":1}}}`, true, wantReject},
	{"key with a lone surrogate", "tools/call", "stat_blob", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{M}"name":"stat_blob","arguments":{"key":"hard/\ud800x"}}}`, true, wantEither},
	{"id 1e999999", "tools/list", "", `{"jsonrpc":"2.0","id":1e999999,"method":"tools/list","params":{P}}`, true, wantEither},
	{"empty body", "tools/list", "", ``, false, wantReject},
	{"whitespace only", "tools/list", "", " \r\n\t ", false, wantReject},
	{"truncated", "tools/list", "", `{"jsonrpc":"2.0","id":1,"method":"tools/li`, false, wantReject},
	{"trailing garbage", "tools/list", "", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{P}}xyz`, false, wantReject},
	{"two messages", "tools/list", "", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{P}}{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{P}}`, false, wantReject},
	{"byte-order mark", "tools/list", "", "\xef\xbb\xbf" + `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{P}}`, false, wantEither},
	{"invalid UTF-8 in a string", "tools/call", "stat_blob", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{M}"name":"stat_blob","arguments":{"key":"hard/` + "\xff\xfe" + `"}}}`, false, wantReject},
	{"single quotes", "tools/list", "", `{'jsonrpc':'2.0','id':1,'method':'tools/list'}`, false, wantReject},
	{"a bare string", "tools/list", "", `"tools/list"`, true, wantReject},
	{"null", "tools/list", "", `null`, true, wantReject},
}

// fill expands the placeholders of b for an era.
func (b rpcBody) fill(era surface) []byte {
	p, m := "{}", ""
	if era == sModern {
		raw, _ := json.Marshal(modern(nil, nil))
		p = string(raw)
		m = strings.TrimSuffix(strings.TrimPrefix(p, "{"), "}") + ","
	}
	s := strings.ReplaceAll(b.body, "{P}", p)
	s = strings.ReplaceAll(s, "{M}", m)
	return []byte(strings.ReplaceAll(s, "{K}", fmt.Sprintf("hard/dup-%d", next())))
}

// v1Bodies are hostile JSON bodies for POST /v1/links and /v1/uploads.
var v1Bodies = []struct{ path, label, body string }{
	{"/v1/links", "duplicate key", `{"key":"` + baseText + `","key":"hard/no-such-blob"}`},
	{"/v1/links", "unknown field", `{"key":"` + baseText + `","bogus":true}`},
	{"/v1/links", "unknown field nested 10,000 deep", `{"key":"` + baseText + `","bogus":` + nest("[", "]", 10000) + `}`},
	{"/v1/links", "key nested 10,000 deep", `{"key":` + nest("[", "]", 10000) + `}`},
	{"/v1/links", "key is a number", `{"key":1}`},
	{"/v1/links", "singleUse is a string", `{"key":"` + baseText + `","singleUse":"yes"}`},
	{"/v1/links", "an array", `[{"key":"` + baseText + `"}]`},
	{"/v1/links", "null", `null`},
	{"/v1/links", "empty body", ``},
	{"/v1/links", "trailing garbage", `{"key":"` + baseText + `"} {"key":"x"}`},
	{"/v1/links", "truncated", `{"key":"` + baseText},
	{"/v1/links", "invalid UTF-8", `{"key":"hard/` + "\xff" + `"}`},
	{"/v1/uploads", "accept is a string", `{"accept":"image/*"}`},
	{"/v1/uploads", "accept holds a number", `{"accept":[1]}`},
	{"/v1/uploads", "accept entry with CR LF", `{"accept":["text/plain\r\nX-Injected: 1"]}`},
	{"/v1/uploads", "unknown field", `{"maxSize":10,"bogus":1}`},
	{"/v1/uploads", "key with NUL", `{"key":"hard/x\u0000y"}`},
}

// jsonAbuse sends the hostile bodies to /mcp in both eras and to /v1.
func jsonAbuse(ctx context.Context, e *env) []batch {
	var leg, mod, v1 []hcase
	for _, b := range rpcBodies {
		c := legacyCase("2025 "+b.label, b.want, true, false, func(*env) []byte { return b.fill(sLegacy) })
		c.wellFormed = b.wellFormed
		leg = append(leg, c)
		c = modernCase("2026 "+b.label, b.want, true, b.method, b.name, func(*env) []byte { return b.fill(sModern) })
		c.wellFormed = b.wellFormed
		mod = append(mod, c)
	}
	leg = append(leg, dupNameCase(sLegacy))
	mod = append(mod, dupNameCase(sModern))
	for _, b := range v1Bodies {
		want := wantReject
		if b.label == "duplicate key" {
			want = wantEither
		}
		v1 = append(v1, rawJSONCase("POST "+b.path+" "+b.label, want, b.path, b.body))
	}
	v1 = append(v1, rawCase("POST /v1/links text/plain body", wantEither, http.MethodPost, "/v1/links", "alice", []byte(`{"key":"`+baseText+`"}`), "Content-Type: text/plain"))
	return []batch{{"JSON and JSON-RPC", sLegacy, leg}, {"JSON and JSON-RPC", sModern, mod}, {"JSON and JSON-RPC", sV1, v1}}
}

// dupNameCase calls "stat_blob" then, in the same params, "delete_blob" on
// a fresh object. Reading the first name (as a proxy or a log might) shows
// a read-only call: the object must survive. A server that refuses
// duplicate names, or runs the first, passes; one that deletes fails.
func dupNameCase(era surface) hcase {
	b := rpcBody{label: "duplicate tool name (stat_blob, then delete_blob)", method: "tools/call", name: "stat_blob",
		body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{M}"name":"stat_blob","name":"delete_blob","arguments":{"key":"{V}"}}}`}
	var victim string
	c := hcase{name: b.label, want: wantEither, wellFormed: true, send: func(ctx context.Context, e *env) *answer {
		victim = fmt.Sprintf("hard/victim-%d", next())
		a := do(e.hc, e.request(ctx, http.MethodPut, "/v1/blobs/"+victim, "alice", []byte("victim")))
		if a.status != http.StatusCreated {
			return a
		}
		e.inv.noteStored("alice", a)
		body := []byte(strings.ReplaceAll(string(b.fill(era)), "{V}", victim))
		if era == sLegacy {
			return e.sendHTTP(ctx, e.legacyReq(ctx, "alice", nil, body))
		}
		req := e.modernReq(ctx, "alice", "tools/call", "stat_blob", body)
		req.Header.Set("Mcp-Param-Blob-Key", victim)
		return e.sendHTTP(ctx, req)
	}}
	c.check = func(ctx context.Context, e *env, _ *answer) string {
		if a := do(e.hc, e.request(ctx, http.MethodHead, "/v1/blobs/"+victim, "alice", nil)); a.status == http.StatusNotFound {
			e.inv.forget("alice", victim)
			return "a call named stat_blob first deleted the blob (the last duplicate \"name\" won)"
		}
		return ""
	}
	return c
}
