package telemetry

import (
	"strings"

	"github.com/mcpblob/mcpblob/core/auth"
	"github.com/mcpblob/mcpblob/core/mcp/observe"
	"github.com/mcpblob/mcpblob/core/metrics"
)

// Route names, the values of the route label: one per endpoint, never a
// path.
const (
	RouteMCP           = "mcp"
	RouteBlob          = "v1-blob"    // /v1/blobs/{key}
	RouteBlobs         = "v1-blobs"   // /v1/blobs (list)
	RouteLinks         = "v1-links"   // /v1/links
	RouteUploads       = "v1-uploads" // /v1/uploads
	RouteV1Other       = "v1-other"
	RouteDownload      = "download"    // /d/{token}
	RouteUpload        = "upload"      // /u/{token}
	RouteUploadPage    = "upload-page" // /upload/{token}
	RouteOAuthMetadata = "oauth-metadata"
	RouteOAuthCallback = "oauth-callback"
	RouteOAuthLogout   = "oauth-logout"
	RouteHealthz       = "healthz"
	RouteReadyz        = "readyz"
	RouteMetrics       = "metrics"
	RouteOther         = "other"
)

// Paths of the login routes (package core/server/blobsvc/uploadpage serves them).
const (
	PathOAuthCallback = "/oauth/callback"
	PathOAuthLogout   = "/oauth/logout"
)

var exact = map[string]string{
	"/mcp": RouteMCP, "/healthz": RouteHealthz, "/readyz": RouteReadyz, "/metrics": RouteMetrics,
	auth.MetadataPath: RouteOAuthMetadata, auth.MetadataPathMCP: RouteOAuthMetadata,
	PathOAuthCallback: RouteOAuthCallback, PathOAuthLogout: RouteOAuthLogout,
	"/v1/blobs": RouteBlobs, "/v1/blobs/": RouteBlobs, "/v1/links": RouteLinks, "/v1/uploads": RouteUploads,
}

var prefixes = []struct{ prefix, route string }{
	{"/v1/blobs/", RouteBlob}, {"/v1/", RouteV1Other}, {"/d/", RouteDownload},
	{"/u/", RouteUpload}, {"/upload/", RouteUploadPage},
}

// Route names the endpoint of path.
func Route(path string) string {
	if r, ok := exact[path]; ok {
		return r
	}
	for _, p := range prefixes {
		if strings.HasPrefix(path, p.prefix) {
			return p.route
		}
	}
	return RouteOther
}

// sentPlane is the plane a response's bytes count on.
func (r *Record) sentPlane() string {
	switch {
	case r.Route == RouteMCP && r.MCP.Method == "resources/stream":
		return metrics.PlaneStream
	case r.Route == RouteMCP:
		return metrics.PlaneMCPRead
	case r.Route == RouteDownload, r.Route == RouteBlob && (r.Method == "GET" || r.Method == "HEAD"):
		return metrics.PlaneDownload
	}
	return metrics.PlaneControl
}

// receivedPlane is the plane a request body's bytes count on.
func (r *Record) receivedPlane() string {
	if _, ok := r.uploadSurface(); ok || r.Route == RouteMCP && r.MCP.Method == "tools/call" {
		return metrics.PlaneUpload
	}
	return metrics.PlaneControl
}

// Surfaces of mcpblob_uploads_total.
const (
	SurfaceMCP      = "mcp"             // the upload_file tool
	SurfaceEndpoint = "upload-endpoint" // /u and /upload
	SurfaceControl  = "control"         // PUT /v1/blobs/{key}
)

// uploadSurface reports whether the request was an upload, and where.
func (r *Record) uploadSurface() (string, bool) {
	write := r.Method == "PUT" || r.Method == "POST"
	switch {
	case r.Route == RouteMCP && r.MCP.Tool == "upload_file":
		return SurfaceMCP, true
	case (r.Route == RouteUpload || r.Route == RouteUploadPage) && write:
		return SurfaceEndpoint, true
	case r.Route == RouteBlob && r.Method == "PUT":
		return SurfaceControl, true
	}
	return "", false
}

// uploadOutcome is ok, rejected (the client's fault: 4xx, a tool's isError)
// or error (the server's: 5xx, a JSON-RPC internal error).
func uploadOutcome(status int, mcpOutcome string) string {
	switch {
	case status >= 500:
		return "error"
	case status >= 400 || mcpOutcome == observe.OutcomeToolError || mcpOutcome == observe.OutcomeError:
		return "rejected"
	}
	return "ok"
}
