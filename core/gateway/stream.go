package gateway

import (
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/mcpblob/mcpblob/core/mcp/headers"
	"github.com/mcpblob/mcpblob/core/mcp/jsonrpc"
	"github.com/mcpblob/mcpblob/core/mcp/resstream"
	"github.com/mcpblob/mcpblob/core/token"
)

// streamState is what a downloadUrl carries besides the principal and the
// URI, for the upstream resources/read its GET makes: the client's
// upstream session and protocol version, and its era.
type streamState struct {
	Session string `json:"s,omitempty"`
	Version string `json:"v,omitempty"`
	Modern  bool   `json:"m,omitempty"`
}

// ownStream answers a resources/stream the upstream does not implement
// with a downloadUrl (SEP-2532's third mode): a sealed, short-lived link,
// bound to the principal, the upstream session and the URI, whose GET
// (ServeDownload) reads the resource from the upstream and sends its
// bytes raw. The upstream is not asked here: a missing resource shows at
// the GET (404).
func (g *Gateway) ownStream(r *Request, w ResponseWriter, c call) {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Params struct {
			URI  *string                    `json:"uri"`
			Meta map[string]json.RawMessage `json:"_meta"`
		} `json:"params"`
	}
	if json.Unmarshal(c.head, &m) != nil {
		writeRPCError(w, nil, jsonrpc.NewError(jsonrpc.CodeParseError, "Parse error: invalid JSON", nil).WithStatus(http.StatusBadRequest))
		return
	}
	if m.ID == nil {
		badRequest(w, nil, "resources/stream is a request: it needs an id")
		return
	}
	if m.Params.URI == nil || *m.Params.URI == "" {
		writeRPCError(w, m.ID, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "Invalid params: uri is required", nil))
		return
	}
	st, maxSize, e := streamEra(r, m.Params.Meta)
	if e != nil {
		writeRPCError(w, m.ID, e)
		return
	}
	uri := *m.Params.URI
	link, err := g.mintStream(r.Principal, uri, st, maxSize)
	if err != nil {
		g.log.Error("gateway: minting a downloadUrl failed", "err", err)
		writeRPCError(w, m.ID, jsonrpc.NewError(jsonrpc.CodeInternalError, "Internal error", nil))
		return
	}
	result := map[string]any{"uri": uri, "downloadUrl": link}
	if st.Modern {
		result["resultType"] = "complete"
	}
	w.SetStatus(http.StatusOK)
	w.AddHeader("Content-Type", "application/json")
	w.AddHeader("Cache-Control", "no-store")
	w.SetBody(jsonrpc.Envelope(m.ID, mustMarshal(result)))
}

// streamEra reads the era of a resources/stream request: 2026-07-28 when
// params._meta carries the protocol version (then the client must declare
// resourceStreaming there: -32021 otherwise), else 2025-11-25 with its
// session header. maxSize is the client's maxStreamSize (0: none known).
func streamEra(r *Request, meta map[string]json.RawMessage) (streamState, int64, *jsonrpc.Error) {
	if raw, ok := meta[headers.MetaProtocolVersion]; ok {
		var ver string
		if json.Unmarshal(raw, &ver) != nil || ver == "" {
			return streamState{}, 0, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "Invalid params: _meta protocolVersion", nil).
				WithStatus(http.StatusBadRequest)
		}
		ok, maxSize := resstream.Capability(meta[headers.MetaClientCapabilities])
		if !ok {
			return streamState{}, 0, jsonrpc.MissingCapability("resourceStreaming")
		}
		return streamState{Version: ver, Modern: true}, maxSize, nil
	}
	return streamState{Session: r.Header.Get(headers.SessionID), Version: r.Header.Get(headers.ProtocolVersion)}, 0, nil
}

// mintStream seals a downloadUrl for principal's read of uri.
func (g *Gateway) mintStream(principal, uri string, st streamState, maxSize int64) (string, error) {
	data, err := json.Marshal(st)
	if err != nil {
		return "", err
	}
	tok, err := g.opts.Keyring.Seal(token.Claims{Purpose: PurposeStream, Principal: principal, Object: uri,
		Expires: time.Now().Add(g.opts.StreamTTL).Truncate(time.Second), SingleUse: g.opts.SingleUse,
		MaxSize: maxSize, Data: data})
	if err != nil {
		return "", err
	}
	return strings.TrimSuffix(g.opts.PublicURL, "/") + DownloadPrefix + tok, nil
}
