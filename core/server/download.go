package server

import (
	"net/http"

	"github.com/valyala/fasthttp"
)

// serveDownload is a placeholder: download links arrive with the byte-plane work.
func (s *Server) serveDownload(ctx *fasthttp.RequestCtx) {
	ctx.SetStatusCode(http.StatusNotFound)
	ctx.SetContentType("application/json")
	ctx.SetBodyString(`{"error":{"code":"not_found","message":"not implemented yet"}}`)
}
