package server

import (
	"cmp"
	"net/http"

	"github.com/valyala/fasthttp"
)

// serveIndex answers GET / with where to go from here, for a person (or a
// script) that points a browser or curl at the bare address first: the MCP
// endpoint, the control API, the health checks and the documentation.
func (s *Server) serveIndex(ctx *fasthttp.RequestCtx) {
	method := string(ctx.Method())
	if method != http.MethodGet && method != http.MethodHead {
		s.drainSmall(ctx)
		methodNotAllowed(ctx, "GET, HEAD")
		return
	}
	writeJSON(ctx, http.StatusOK, indexBody{
		Name: cmp.Or(s.opts.Name, "mcpblob"), // serverInfo's name
		Endpoints: map[string]string{
			"/mcp":     "MCP Streamable HTTP: 2025-11-25 sessions (initialize) and stateless 2026-07-28 on one endpoint",
			"/v1":      "control API: /v1/blobs, /v1/links, /v1/uploads (docs/control-api.md)",
			"/healthz": "liveness: 200 ok",
			"/readyz":  "readiness: 200 ready, 503 while shutting down",
		},
		Docs: "README.md and docs/ in the mcpblob repository (docs/operations.md, docs/control-api.md, docs/uploads.md)",
	})
}

type indexBody struct {
	Name      string            `json:"name"`
	Endpoints map[string]string `json:"endpoints"`
	Docs      string            `json:"docs"`
}
