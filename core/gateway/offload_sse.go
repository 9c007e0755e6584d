package gateway

import (
	"encoding/json"
	"errors"
	"io"

	"github.com/mcpblob/mcpblob/core/gateway/blobdecode"
	"github.com/mcpblob/mcpblob/core/gateway/offload"
)

// offloadSSE relays an SSE answer with its large blobs offloaded
// (offload.SSE): a rewrite that fails while its event is held is answered
// with a JSON-RPC error event for the request id, logged once.
func (g *Gateway) offloadSSE(sw StreamWriter, body io.Reader, opts blobdecode.RewriteOptions, stored *offload.Stored, id json.RawMessage) error {
	s := &offload.SSE{W: sw, Max: int(g.opts.MaxRewriteBytes),
		Relayed:  func(n int64) { g.metrics.Relayed("to_client", n) },
		BrokeOff: g.brokeOff,
		Failed: func(f *offload.Failure, err error, spilled bool) []byte {
			e := offloadError(f)
			switch {
			case spilled:
				g.log.Warn("gateway: offloading an SSE answer failed midway", "problem", e.msg, "upstream", g.Upstream())
				return nil
			case f.Quota != nil:
				g.logQuota(f.Quota)
				return errorEvent(id, quotaError(f.Quota))
			case e.kind != "":
				g.metrics.Upstream(e.kind, 0)
				g.log.Warn("gateway: upstream failed", "kind", e.kind, "problem", e.msg, "upstream", g.Upstream())
			default:
				g.log.Error("gateway: storing an offloaded blob failed", "err", err)
				return errorEvent(id, storeFailedError())
			}
			return errorEvent(id, e.rpcError())
		}}
	return s.Relay(body, opts, stored)
}

func (g *Gateway) brokeOff() error {
	g.metrics.Upstream(kindBroken, 0)
	g.log.Warn("gateway: upstream answer broke off", "kind", kindBroken, "upstream", g.Upstream())
	return errors.New("gateway: the upstream's answer broke off")
}
