package server

import (
	"net/http"

	"github.com/valyala/fasthttp"
)

// serveUpload is a placeholder: upload endpoints arrive with the uploads work.
func (s *Server) serveUpload(ctx *fasthttp.RequestCtx) {
	ctx.SetStatusCode(http.StatusNotFound)
	ctx.SetContentType("application/json")
	ctx.SetBodyString(`{"error":{"code":"not_found","message":"not implemented yet"}}`)
}
