package index

import (
	"cmp"
	"encoding/json"
	"net/http"

	"github.com/valyala/fasthttp"
)

// Serve answers a GET or HEAD of / with the JSON map and reports true; any
// other method is left to the caller (a 405) and reports false. name is the
// server's name (serverInfo's), default "mcpblob".
func Serve(ctx *fasthttp.RequestCtx, name string) bool {
	method := string(ctx.Method())
	if method != http.MethodGet && method != http.MethodHead {
		return false
	}
	b, err := json.Marshal(body{
		Name: cmp.Or(name, "mcpblob"),
		Endpoints: map[string]string{
			"/mcp":     "MCP Streamable HTTP: 2025-11-25 sessions (initialize) and stateless 2026-07-28 on one endpoint",
			"/v1":      "control API: /v1/blobs, /v1/links, /v1/uploads (docs/control-api.md)",
			"/healthz": "liveness: 200 ok",
			"/readyz":  "readiness: 200 ready, 503 while shutting down",
		},
		Docs: "README.md and docs/ in the mcpblob repository (docs/operations.md, docs/control-api.md, docs/uploads.md)",
	})
	if err != nil {
		panic("bug: the index does not marshal: " + err.Error())
	}
	ctx.SetStatusCode(http.StatusOK)
	ctx.SetContentType("application/json")
	ctx.SetBody(b)
	return true
}

type body struct {
	Name      string            `json:"name"`
	Endpoints map[string]string `json:"endpoints"`
	Docs      string            `json:"docs"`
}
