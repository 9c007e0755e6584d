package front

import (
	"net/http"
	"strings"

	"github.com/mcpblob/mcpblob/core/server/gate"
	"github.com/valyala/fasthttp"
)

// A separate download origin (server.Options.DownloadURL; docs/security.md, "How
// stored content is served"): /d links are minted on it and served only
// there, and it serves nothing else, so neither stored bytes on the
// service's origin nor the API on the origin of stored bytes.

// misdirected refuses, with 404, a request for the wrong origin when a
// download origin is configured: anything but /d (and the health probes)
// on the download host, and /d on any other host. It reports whether it
// answered.
func (s *Server) misdirected(ctx *fasthttp.RequestCtx, path string) bool {
	if s.env.DownloadHost == "" || path == "/healthz" || path == "/readyz" {
		return false
	}
	onDownload := strings.EqualFold(strings.TrimSuffix(gate.HostOnly(string(ctx.Host())), "."), s.env.DownloadHost)
	isLink := strings.HasPrefix(path, "/d/")
	switch {
	case onDownload && !isLink:
		s.gate.RefuseBody(ctx, http.StatusNotFound, "not_found", "this origin serves download links only")
	case !onDownload && isLink:
		s.gate.RefuseBody(ctx, http.StatusNotFound, "not_found", "download links are served from "+s.env.DownloadURL)
	default:
		return false
	}
	return true
}
