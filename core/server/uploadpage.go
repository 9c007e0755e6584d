package server

import (
	"net/http"

	"github.com/valyala/fasthttp"
)

// serveUploadPage is a placeholder: the upload page arrives with the uploads work.
func (s *Server) serveUploadPage(ctx *fasthttp.RequestCtx) {
	ctx.SetStatusCode(http.StatusNotFound)
	ctx.SetContentType("application/json")
	ctx.SetBodyString(`{"error":{"code":"not_found","message":"not implemented yet"}}`)
}
