// Package usage serves GET /v1/usage: the caller's usage and quota
// (storage/quota; docs/quotas.md), in front of the blob service, which
// owns the rest of /v1.
package usage

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/mcpblob/mcpblob/core/auth"
	"github.com/mcpblob/mcpblob/core/server/gate"
)

// readTimeout bounds the read of the usage record.
const readTimeout = 30 * time.Second

// Path is the endpoint.
const Path = "/v1/usage"

// Service is the blob service (front.Service's methods) with Path
// answered here.
type Service struct {
	Inner interface {
		Owns(path string) bool
		Serve(ctx *fasthttp.RequestCtx)
		Admit(ctx *fasthttp.RequestCtx) bool
	}
	Gate *gate.Gate
	Log  *slog.Logger
	// Usage returns principal's usage and quota as a JSON value.
	Usage func(ctx context.Context, principal string) (any, error)
}

// Owns reports whether path is Path or one of Inner's.
func (s *Service) Owns(path string) bool { return path == Path || s.Inner.Owns(path) }

// Admit lets a request to Path through (it reads no body).
func (s *Service) Admit(ctx *fasthttp.RequestCtx) bool {
	return string(ctx.Path()) == Path || s.Inner.Admit(ctx)
}

// Serve answers Path, and hands every other request to Inner.
func (s *Service) Serve(ctx *fasthttp.RequestCtx) {
	if string(ctx.Path()) != Path {
		s.Inner.Serve(ctx)
		return
	}
	id, ok := s.identify(ctx)
	if !ok {
		return
	}
	// Not ctx itself: fasthttp reuses it after Serve, and the store's
	// HTTP client may still hold the context it was given.
	sctx, cancel := context.WithTimeout(context.Background(), readTimeout)
	defer cancel()
	u, err := s.Usage(sctx, id.Principal)
	if err != nil {
		s.Log.Error("server: reading the usage failed", "err", err)
		gate.APIError(ctx, http.StatusServiceUnavailable, "unavailable", "the usage cannot be read right now; try again")
		return
	}
	gate.WriteJSON(ctx, http.StatusOK, u)
}

// identify makes the control API's checks (Host and Origin, the
// credential, the read scope, the method); on refusal it answers.
func (s *Service) identify(ctx *fasthttp.RequestCtx) (auth.Identity, bool) {
	if why := s.Gate.CheckHostOrigin(ctx); why != "" {
		gate.APIError(ctx, http.StatusForbidden, "forbidden", why)
		return auth.Identity{}, false
	}
	id, refused := s.Gate.Identify(ctx)
	if refused == nil {
		refused = s.Gate.RequireScope(id, auth.ScopeRead)
	}
	if refused != nil {
		s.Gate.Refuse(ctx, refused)
		return auth.Identity{}, false
	}
	switch {
	case !ctx.IsGet() && !ctx.IsHead():
		gate.MethodNotAllowed(ctx, "GET, HEAD")
	case id.Principal == "":
		gate.APIError(ctx, http.StatusBadRequest, "bad_request", "usage is counted per principal; this request has none")
	default:
		return id, true
	}
	return auth.Identity{}, false
}
