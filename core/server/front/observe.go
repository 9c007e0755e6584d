package front

import (
	"fmt"
	"net"
	"net/http"

	"github.com/valyala/fasthttp"

	"github.com/mcpblob/mcpblob/core/budget"
	"github.com/mcpblob/mcpblob/core/metrics"
	"github.com/mcpblob/mcpblob/core/server/admin"
	"github.com/mcpblob/mcpblob/core/server/gate"
)

// Every request opens a telemetry Record (request id, route, caller, MCP
// method) that handle ends: metrics and the access-log line. Storage
// operations are observed below the blob application, so every path's
// count and latency show.

// countStreams adds the streams core/mcp and the upload slots count.
func (s *Server) countStreams() {
	m := s.tel.Metrics()
	m.StreamSource(metrics.StreamSSE, func() float64 { sse, _ := s.mcp.ActiveStreams(); return float64(sse) })
	m.StreamSource(metrics.StreamListen, func() float64 { _, l := s.mcp.ActiveStreams(); return float64(l) })
	m.StreamSource(metrics.StreamUpload, s.gate.Uploads.InProgress)
	m.Gauge("mcpblob_sessions_active", func() float64 { return float64(s.mcp.Sessions()) })
	b := s.mcp.Budgets()
	b.Notify(func(e *budget.Exceeded) { m.LimitRefused(e.Name, string(e.Scope)) })
	for kind, pool := range b.Held() {
		m.StateHeld(kind, func() float64 { return float64(pool.Total()) })
	}
}

// serveMetrics answers /metrics on the main listener of an open loopback
// node without an admin listener; elsewhere /metrics is not found. It gets
// the DNS-rebinding check of /mcp and /v1 (Host a localhost name, Origin,
// if any, a localhost origin): a page whose name was rebound to 127.0.0.1
// must not read the node's counters.
func (s *Server) serveMetrics(ctx *fasthttp.RequestCtx) {
	if !s.gate.Loopback || s.gate.Auth.Enabled() || s.opts.Admin.Listen != "" {
		gate.NotFound(ctx)
		return
	}
	if why := s.gate.CheckHostOrigin(ctx); why != "" {
		gate.APIError(ctx, http.StatusForbidden, "forbidden", why)
		return
	}
	s.tel.ServeMetrics(ctx)
}

// startAdmin starts the admin listener, when configured.
func (s *Server) startAdmin() error {
	if s.opts.Admin.Listen == "" {
		return nil
	}
	a, err := admin.Listen(s.opts.Admin.Listen, s.tel.Metrics(),
		admin.Options{Hosts: s.opts.Admin.Hosts, Token: s.opts.Admin.Token}, s.log)
	if err != nil {
		return fmt.Errorf("server: %w", err)
	}
	s.mu.Lock()
	s.admin = a
	s.mu.Unlock()
	return nil
}

func (s *Server) adminServer() *admin.Server {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.admin
}

// AdminAddr is the admin listener's address, nil when there is none.
func (s *Server) AdminAddr() net.Addr {
	if a := s.adminServer(); a != nil {
		return a.Addr()
	}
	return nil
}
