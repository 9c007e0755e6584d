package hostile

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/mcpblob/mcpblob/loadtest/hardening/internal/wire"
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
	want       Want
}

func nest(open, close string, n int) string {
	return strings.Repeat(open, n) + strings.Repeat(close, n)
}

var rpcBodies = []rpcBody{
	{"duplicate id", "tools/list", "", `{"jsonrpc":"2.0","id":1,"id":2,"method":"tools/list","params":{P}}`, true, WantEither},
	{"duplicate method", "tools/list", "", `{"jsonrpc":"2.0","id":1,"method":"tools/list","method":"tools/call","params":{P}}`, true, WantEither},
	{"duplicate key argument", "tools/call", "upload_file",
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{M}"name":"upload_file","arguments":{"key":"{K}","key":"{K}-b","file":"data:text/plain;base64,QUJD"}}}`, true, WantEither},
	{"duplicate arguments", "tools/call", "stat_blob",
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{M}"name":"stat_blob","arguments":{"key":"` + BaseText + `"},"arguments":{"key":".mcpblob/token-keys"}}}`, true, WantEither},
	{"params nested 10,000 deep", "tools/list", "", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{{M}"x":` + nest("[", "]", 10000) + `}}`, true, WantEither},
	{"argument nested 10,000 deep", "tools/call", "stat_blob",
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{M}"name":"stat_blob","arguments":{"key":` + strings.Repeat(`{"a":`, 10000) + `1` + strings.Repeat("}", 10000) + `}}}`, true, WantReject},
	{"id nested 10,000 deep", "tools/list", "", `{"jsonrpc":"2.0","id":` + nest("[", "]", 10000) + `,"method":"tools/list","params":{P}}`, true, WantReject},
	{"params nested 100,000 deep", "tools/list", "", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{{M}"x":` + nest("[", "]", 100000) + `}}`, true, WantEither},
	{"empty batch", "tools/list", "", `[]`, true, WantReject},
	{"batch of one", "tools/list", "", `[{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{P}}]`, true, WantReject},
	{"batch of two", "tools/list", "", `[{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{P}},{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{P}}]`, true, WantReject},
	{"id is an object", "tools/list", "", `{"jsonrpc":"2.0","id":{},"method":"tools/list","params":{P}}`, true, WantReject},
	{"id is true", "tools/list", "", `{"jsonrpc":"2.0","id":true,"method":"tools/list","params":{P}}`, true, WantReject},
	{"id is null", "tools/list", "", `{"jsonrpc":"2.0","id":null,"method":"tools/list","params":{P}}`, true, WantEither},
	{"method is a number", "tools/list", "", `{"jsonrpc":"2.0","id":1,"method":1,"params":{P}}`, true, WantReject},
	{"method is empty", "tools/list", "", `{"jsonrpc":"2.0","id":1,"method":"","params":{P}}`, true, WantReject},
	{"method with NUL", "tools/list", "", `{"jsonrpc":"2.0","id":1,"method":"tools/list\u0000","params":{P}}`, true, WantReject},
	{"params is an array", "tools/list", "", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":[]}`, true, WantReject},
	{"params is a string", "tools/list", "", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":"x"}`, true, WantReject},
	{"jsonrpc 1.0", "tools/list", "", `{"jsonrpc":"1.0","id":1,"method":"tools/list","params":{P}}`, true, WantReject},
	{"jsonrpc missing", "tools/list", "", `{"id":1,"method":"tools/list","params":{P}}`, true, WantReject},
	{"jsonrpc is a number", "tools/list", "", `{"jsonrpc":2.0,"id":1,"method":"tools/list","params":{P}}`, true, WantReject},
	{"tool name is a number", "tools/call", "1", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{M}"name":1,"arguments":{}}}`, true, WantReject},
	{"tools/call without name", "tools/call", "", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{M}"arguments":{}}}`, true, WantReject},
	{"unknown tool", "tools/call", "no_such_tool", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{M}"name":"no_such_tool","arguments":{}}}`, true, WantReject},
	{"arguments is an array", "tools/call", "stat_blob", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{M}"name":"stat_blob","arguments":[]}}`, true, WantReject},
	{"key is a number", "tools/call", "stat_blob", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{M}"name":"stat_blob","arguments":{"key":1}}}`, true, WantReject},
	{"key is null", "tools/call", "stat_blob", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{M}"name":"stat_blob","arguments":{"key":null}}}`, true, WantReject},
	{"unknown argument (additionalProperties false)", "tools/call", "stat_blob",
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{M}"name":"stat_blob","arguments":{"key":"` + BaseText + `","bogus":1}}}`, true, WantReject},
	{"key with a lone surrogate", "tools/call", "stat_blob", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{M}"name":"stat_blob","arguments":{"key":"hard/\ud800x"}}}`, true, WantEither},
	{"id 1e999999", "tools/list", "", `{"jsonrpc":"2.0","id":1e999999,"method":"tools/list","params":{P}}`, true, WantEither},
	{"empty body", "tools/list", "", ``, false, WantReject},
	{"whitespace only", "tools/list", "", " \r\n\t ", false, WantReject},
	{"truncated", "tools/list", "", `{"jsonrpc":"2.0","id":1,"method":"tools/li`, false, WantReject},
	{"trailing garbage", "tools/list", "", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{P}}xyz`, false, WantReject},
	{"two messages", "tools/list", "", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{P}}{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{P}}`, false, WantReject},
	{"byte-order mark", "tools/list", "", "\xef\xbb\xbf" + `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{P}}`, false, WantEither},
	{"invalid UTF-8 in a string", "tools/call", "stat_blob", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{M}"name":"stat_blob","arguments":{"key":"hard/` + "\xff\xfe" + `"}}}`, false, WantReject},
	{"single quotes", "tools/list", "", `{'jsonrpc':'2.0','id':1,'method':'tools/list'}`, false, WantReject},
	{"a bare string", "tools/list", "", `"tools/list"`, true, WantReject},
	{"null", "tools/list", "", `null`, true, WantReject},
}

// fill expands the placeholders of b for an era.
func (b rpcBody) fill(era Surface) []byte {
	p, m := "{}", ""
	if era == Modern {
		raw, _ := json.Marshal(WithMeta(nil, nil))
		p = string(raw)
		m = strings.TrimSuffix(strings.TrimPrefix(p, "{"), "}") + ","
	}
	s := strings.ReplaceAll(b.body, "{P}", p)
	s = strings.ReplaceAll(s, "{M}", m)
	return []byte(strings.ReplaceAll(s, "{K}", fmt.Sprintf("hard/dup-%d", next())))
}

// v1Bodies are hostile JSON bodies for POST /v1/links and /v1/uploads.
var v1Bodies = []struct{ path, label, body string }{
	{"/v1/links", "duplicate key", `{"key":"` + BaseText + `","key":"hard/no-such-blob"}`},
	{"/v1/links", "unknown field", `{"key":"` + BaseText + `","bogus":true}`},
	{"/v1/links", "unknown field nested 10,000 deep", `{"key":"` + BaseText + `","bogus":` + nest("[", "]", 10000) + `}`},
	{"/v1/links", "key nested 10,000 deep", `{"key":` + nest("[", "]", 10000) + `}`},
	{"/v1/links", "key is a number", `{"key":1}`},
	{"/v1/links", "singleUse is a string", `{"key":"` + BaseText + `","singleUse":"yes"}`},
	{"/v1/links", "an array", `[{"key":"` + BaseText + `"}]`},
	{"/v1/links", "null", `null`},
	{"/v1/links", "empty body", ``},
	{"/v1/links", "trailing garbage", `{"key":"` + BaseText + `"} {"key":"x"}`},
	{"/v1/links", "truncated", `{"key":"` + BaseText},
	{"/v1/links", "invalid UTF-8", `{"key":"hard/` + "\xff" + `"}`},
	{"/v1/uploads", "accept is a string", `{"accept":"image/*"}`},
	{"/v1/uploads", "accept holds a number", `{"accept":[1]}`},
	{"/v1/uploads", "accept entry with CR LF", `{"accept":["text/plain\r\nX-Injected: 1"]}`},
	{"/v1/uploads", "unknown field", `{"maxSize":10,"bogus":1}`},
	{"/v1/uploads", "key with NUL", `{"key":"hard/x\u0000y"}`},
}

// jsonAbuse sends the hostile bodies to /mcp in both eras and to /v1.
func jsonAbuse(ctx context.Context, e *Env) []Batch {
	var leg, mod, v1 []Case
	for _, b := range rpcBodies {
		c := legacyCase("2025 "+b.label, b.want, true, false, func(*Env) []byte { return b.fill(Legacy) })
		c.WellFormed = b.wellFormed
		leg = append(leg, c)
		c = modernCase("2026 "+b.label, b.want, true, b.method, b.name, func(*Env) []byte { return b.fill(Modern) })
		c.WellFormed = b.wellFormed
		mod = append(mod, c)
	}
	leg = append(leg, dupNameCase(Legacy))
	mod = append(mod, dupNameCase(Modern))
	for _, b := range v1Bodies {
		want := WantReject
		if b.label == "duplicate key" {
			want = WantEither
		}
		v1 = append(v1, rawJSONCase("POST "+b.path+" "+b.label, want, b.path, b.body))
	}
	v1 = append(v1, rawCase("POST /v1/links text/plain body", WantEither, http.MethodPost, "/v1/links", "alice", []byte(`{"key":"`+BaseText+`"}`), "Content-Type: text/plain"))
	return []Batch{{"JSON and JSON-RPC", Legacy, leg}, {"JSON and JSON-RPC", Modern, mod}, {"JSON and JSON-RPC", V1, v1}}
}

// dupNameCase calls "stat_blob" then, in the same params, "delete_blob" on
// a fresh object. Reading the first name (as a proxy or a log might) shows
// a read-only call: the object must survive. A server that refuses
// duplicate names, or runs the first, passes; one that deletes fails.
func dupNameCase(era Surface) Case {
	b := rpcBody{label: "duplicate tool name (stat_blob, then delete_blob)", method: "tools/call", name: "stat_blob",
		body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{M}"name":"stat_blob","name":"delete_blob","arguments":{"key":"{V}"}}}`}
	var victim string
	c := Case{Name: b.label, Want: WantEither, WellFormed: true, Send: func(ctx context.Context, e *Env) *wire.Answer {
		victim = fmt.Sprintf("hard/victim-%d", next())
		a := wire.Do(e.HTTP, e.Request(ctx, http.MethodPut, "/v1/blobs/"+victim, "alice", []byte("victim")))
		if a.Status != http.StatusCreated {
			return a
		}
		e.inv.NoteStored("alice", a)
		body := []byte(strings.ReplaceAll(string(b.fill(era)), "{V}", victim))
		if era == Legacy {
			return e.sendHTTP(ctx, e.legacyReq(ctx, "alice", nil, body))
		}
		req := e.ModernReq(ctx, "alice", "tools/call", "stat_blob", body)
		req.Header.Set("Mcp-Param-Blob-Key", victim)
		return e.sendHTTP(ctx, req)
	}}
	c.Check = func(ctx context.Context, e *Env, _ *wire.Answer) string {
		if a := wire.Do(e.HTTP, e.Request(ctx, http.MethodHead, "/v1/blobs/"+victim, "alice", nil)); a.Status == http.StatusNotFound {
			e.inv.Forget("alice", victim)
			return "a call named stat_blob first deleted the blob (the last duplicate \"name\" won)"
		}
		return ""
	}
	return c
}
