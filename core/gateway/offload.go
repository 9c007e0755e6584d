package gateway

import (
	"github.com/mcpblob/mcpblob/core/gateway/offload"
)

// Offloading (--offload-over; package offload): an embedded base64 blob
// over a threshold in an upstream's tools/call answer is decoded into the
// store as it arrives and its content item replaced by a resource_link to
// OffloadURIPrefix + id, which the gateway itself answers
// (offload_read.go). The names below are package offload's, kept here for
// the gateway's users.

// DefaultOffloadOver is the CLI's --offload-over (offload.DefaultOver).
const DefaultOffloadOver = offload.DefaultOver

// OffloadURIPrefix is the URI prefix of offloaded blobs.
const OffloadURIPrefix = offload.URIPrefix

type (
	// OffloadOptions configure offloading; the zero value is off.
	OffloadOptions = offload.Options
	// OffloadStore keeps offloaded blobs.
	OffloadStore = offload.Store
	// OffloadWriter is one offloaded blob being stored.
	OffloadWriter = offload.Writer
	// OffloadInfo describes a stored offloaded blob.
	OffloadInfo = offload.Info
	// OffloadMetrics is implemented by a Metrics that counts offloads.
	OffloadMetrics = offload.Metrics
)

// ErrOffloadNotFound means the caller has no offloaded blob of that id.
var ErrOffloadNotFound = offload.ErrNotFound

// initOffload checks and fills in Options.Offload; g.off stays nil when
// offloading is off.
func (g *Gateway) initOffload() error {
	m, _ := g.metrics.(OffloadMetrics)
	off, err := offload.New(g.opts.Offload, m)
	g.off = off
	return err
}

// offloads reports whether the gateway rewrites the answers to method:
// tools/call only. A resources/read entry must stay text or blob contents
// (a resource_link there is not a ReadResourceResult); a client that wants
// such a blob raw asks resources/stream, which the gateway adds.
func (g *Gateway) offloads(method string) bool {
	return g.off != nil && method == methodToolsCall
}

const methodToolsCall = "tools/call"
