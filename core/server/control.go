package server

import (
	"net/http"

	"github.com/valyala/fasthttp"
)

// serveControl is a placeholder: the control API (/v1) arrives with the byte-plane work.
func (s *Server) serveControl(ctx *fasthttp.RequestCtx) {
	ctx.SetStatusCode(http.StatusNotFound)
	ctx.SetContentType("application/json")
	ctx.SetBodyString(`{"error":{"code":"not_found","message":"not implemented yet"}}`)
}
