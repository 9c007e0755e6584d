package hostile

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/mcpblob/mcpblob/loadtest/hardening/internal/wire"
)

// ExpiryName is the expiry abuse class (docs/lifecycle.md): ttlSeconds of
// 0, negative, over the 10-year cap, past any integer type, not a number,
// on every upload surface. Each must be refused in the surface's terms,
// naming ttlSeconds, with nothing stored; a valid one is stored.
const ExpiryName = "expiry abuse"

// badTTLText are ttlSeconds values given as text (query, header, tus
// metadata); badTTLJSON as JSON members.
var (
	badTTLText = []string{"0", "-1", "-0", "315360001", "9223372036854775808", "99999999999999999999999", "abc", "1.5", "1e3", "0x10", "", "5s"}
	badTTLJSON = []string{"0", "-1", "315360001", "9223372036854775808", "1e309", "0.5", "1.5", `"900"`, "true", "[]", "{}"}
)

func expiryAbuse(ctx context.Context, e *Env) []Batch {
	return []Batch{
		{ExpiryName, V1, expiryV1()},
		{ExpiryName, Tus, expiryTus()},
		{ExpiryName, Legacy, expiryMCP(Legacy)},
		{ExpiryName, Modern, expiryMCP(Modern)},
	}
}

// namesTTL checks that a refusal names the argument.
func namesTTL(_ context.Context, _ *Env, a *wire.Answer) string {
	if a.Status >= 200 && a.Status < 300 && !strings.Contains(string(a.Body), `"isError":true`) && !strings.Contains(string(a.Body), `"error"`) {
		return ""
	}
	if !strings.Contains(strings.ToLower(string(a.Body)), "ttlseconds") {
		return "the refusal does not name ttlSeconds: " + a.String()
	}
	return ""
}

func expiryV1() []Case {
	var cs []Case
	for _, v := range badTTLText {
		c := rawCase("PUT ?ttlSeconds="+v, WantReject, http.MethodPut,
			fmt.Sprintf("/v1/blobs/hard/ttl-%d?ttlSeconds=%s", next(), url.QueryEscape(v)), "alice", []byte("x"))
		c.Check = namesTTL
		cs = append(cs, c)
		if v != "" {
			h := rawCase("PUT x-mcp-ttl-seconds: "+v, WantReject, http.MethodPut, fmt.Sprintf("/v1/blobs/hard/ttl-%d", next()), "alice",
				[]byte("x"), "X-Mcp-Ttl-Seconds: "+v)
			h.Check = namesTTL
			cs = append(cs, h)
		}
	}
	for _, v := range badTTLJSON {
		c := rawJSONCase("POST /v1/uploads blobTtlSeconds "+v, WantReject, "/v1/uploads", `{"blobTtlSeconds":`+v+`}`)
		c.Check = namesTTL
		cs = append(cs, c)
	}
	return append(cs,
		rawCase("PUT ?ttlSeconds=86400", WantAccept, http.MethodPut, fmt.Sprintf("/v1/blobs/hard/ttl-%d?ttlSeconds=86400", next()), "alice", []byte("x")),
		rawCase("PUT ?ttlSeconds=5 with x-mcp-ttl-seconds: 6", WantReject, http.MethodPut, fmt.Sprintf("/v1/blobs/hard/ttl-%d?ttlSeconds=5", next()),
			"alice", []byte("x"), "X-Mcp-Ttl-Seconds: 6"),
	)
}

func expiryTus() []Case {
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	var cs []Case
	for _, v := range append(badTTLText, "") {
		meta := fmt.Sprintf("key %s,ttlSeconds %s", b64(fmt.Sprintf("hard/ttl-tus-%d", next())), b64(v))
		c := rawCase("tus Upload-Metadata ttlSeconds "+v, WantReject, http.MethodPost, "/v1/tus/", "alice", nil,
			"Tus-Resumable: 1.0.0", "Upload-Length: 10", "Upload-Metadata: "+meta)
		c.Check = namesTTL
		cs = append(cs, c)
	}
	own := fmt.Sprintf("key %s,mcpblob-expires-ms %s", b64(fmt.Sprintf("hard/ttl-tus-%d", next())), b64("1"))
	return append(cs, rawCase("tus Upload-Metadata with the server's own mcpblob-expires-ms", WantReject, http.MethodPost, "/v1/tus/",
		"alice", nil, "Tus-Resumable: 1.0.0", "Upload-Length: 10", "Upload-Metadata: "+own))
}

func expiryMCP(era Surface) []Case {
	var cs []Case
	for _, n := range badTTLJSON {
		var v any = json.RawMessage(n)
		key := fmt.Sprintf("hard/ttl-tool-%d", next())
		up := toolCase(era, "upload_file ttlSeconds "+n, WantReject, "upload_file", func(e *Env) map[string]any {
			return map[string]any{"key": key, "ttlSeconds": v, "file": e.dataURI("text/plain")}
		})
		up.Check = namesTTL
		req := requestUploadCase(era, "request_upload ttlSeconds "+n, v)
		req.Check = namesTTL
		cs = append(cs, up, req)
	}
	key := fmt.Sprintf("hard/ttl-tool-%d", next())
	return append(cs, toolCase(era, "upload_file ttlSeconds 86400", WantAccept, "upload_file", func(e *Env) map[string]any {
		return map[string]any{"key": key, "ttlSeconds": 86400, "file": e.dataURI("text/plain")}
	}))
}

// requestUploadCase calls request_upload with ttlSeconds v; in 2026-07-28
// the request declares elicitation, else the server refuses the call for
// the missing capability before it reads the arguments.
func requestUploadCase(era Surface, label string, v any) Case {
	args := map[string]any{"ttlSeconds": v}
	if era == Legacy {
		return toolCase(era, label, WantReject, "request_upload", func(*Env) map[string]any { return args })
	}
	caps := map[string]any{"elicitation": map[string]any{"form": map[string]any{}, "url": map[string]any{}}}
	return modernCase(label, WantReject, false, "tools/call", "request_upload", func(*Env) []byte {
		return RPC("tools/call", WithMeta(call("request_upload", args), caps))
	})
}
