package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"

	"github.com/mcpblob/mcpblob/core/gateway/blobdecode"
	"github.com/mcpblob/mcpblob/core/gateway/offload"
	"github.com/mcpblob/mcpblob/core/mcp/headers"
	"github.com/mcpblob/mcpblob/core/mcp/jsonrpc"
)

// ownOffloaded answers a resources/read or resources/stream of an
// offloaded blob's URI (OffloadURIPrefix) from the store; it reports
// false, the request read whole in c, for any other request, which is
// relayed.
func (g *Gateway) ownOffloaded(r *Request, w ResponseWriter, c *call) bool {
	if g.off == nil || (c.method != methodRead && c.method != methodStream) {
		return false
	}
	if !c.whole && !g.readWhole(r, w, c) {
		return true
	}
	if !mayName(c.head, offload.URIPrefix) {
		return false
	}
	var m struct {
		ID     json.RawMessage `json:"id"`
		Params struct {
			URI  string                     `json:"uri"`
			Meta map[string]json.RawMessage `json:"_meta"`
		} `json:"params"`
	}
	if json.Unmarshal(c.head, &m) != nil {
		return false // the upstream answers what it cannot parse either
	}
	id, ok := offload.ID(m.Params.URI)
	if !ok || m.ID == nil {
		return false
	}
	c.id = m.ID
	_, modern := m.Params.Meta[headers.MetaProtocolVersion]
	if c.method == methodStream {
		g.streamOffloaded(r, w, m.ID, m.Params.URI, id, modern)
	} else {
		g.readOffloaded(r, w, m.ID, m.Params.URI, id, modern)
	}
	return true
}

// readOffloaded answers resources/read with the blob as base64, streamed
// from the store with its exact length: flat memory whatever its size.
func (g *Gateway) readOffloaded(r *Request, w ResponseWriter, id json.RawMessage, uri, blob string, modern bool) {
	ctx, cancel := context.WithCancel(context.Background())
	rc, info, err := g.off.Store().Open(ctx, r.Principal, blob)
	if err != nil {
		cancel()
		g.offloadedMissing(w, id, uri, err)
		return
	}
	prefix, suffix, size := offload.ReadAnswer(id, uri, info, modern)
	w.SetStatus(http.StatusOK)
	w.AddHeader("Content-Type", "application/json")
	w.AddHeader("Cache-Control", "no-store")
	w.SetBodyStream(size, func(sw StreamWriter) error {
		defer cancel()
		defer rc.Close()
		if _, err := sw.Write(prefix); err != nil {
			return err
		}
		n, err := blobdecode.Encode(sw, rc)
		if err == nil && n != info.Size {
			err = io.ErrUnexpectedEOF
		}
		if err == nil {
			_, err = sw.Write(suffix)
		}
		return err
	})
}

// streamOffloaded answers resources/stream with a downloadUrl: the
// store's link to the blob's raw bytes (core/server's: a /d link of the
// blob service, with Range, sendfile or a redirect to the store).
func (g *Gateway) streamOffloaded(r *Request, w ResponseWriter, id json.RawMessage, uri, blob string, modern bool) {
	link, info, err := g.off.Store().Link(context.Background(), r.Principal, blob)
	if err != nil {
		g.offloadedMissing(w, id, uri, err)
		return
	}
	result := map[string]any{"uri": uri, "downloadUrl": link, "mimeType": info.MediaType, "size": info.Size}
	if modern {
		result["resultType"] = "complete"
	}
	w.SetStatus(http.StatusOK)
	w.AddHeader("Content-Type", "application/json")
	w.AddHeader("Cache-Control", "no-store")
	w.SetBody(jsonrpc.Envelope(id, mustMarshal(result)))
}

// offloadedMissing answers a read of an offloaded blob the caller has not
// (another principal's, expired, never stored): resource not found.
func (g *Gateway) offloadedMissing(w ResponseWriter, id json.RawMessage, uri string, err error) {
	if !errors.Is(err, ErrOffloadNotFound) {
		g.log.Error("gateway: opening an offloaded blob failed", "err", err)
		writeRPCError(w, id, jsonrpc.NewError(jsonrpc.CodeInternalError, "Internal error", nil))
		return
	}
	writeRPCError(w, id, jsonrpc.NewError(jsonrpc.CodeResourceNotFound, "Resource not found", map[string]string{"uri": uri}))
}

// mayName reports whether the JSON text b may hold the string s: it does,
// or b has an escape, which could spell s otherwise. Most reads name no
// offloaded blob, and are relayed without being decoded.
func mayName(b []byte, s string) bool {
	return bytes.IndexByte(b, '\\') >= 0 || bytes.Contains(b, []byte(s))
}
