package gateway

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"

	"github.com/mcpblob/mcpblob/core/gateway/fileargs"
	"github.com/mcpblob/mcpblob/core/gateway/wire"
	"github.com/mcpblob/mcpblob/core/mcp/headers"
)

// The gateway's own tools/list: every page (up to maxToolPages), each
// answer read within MaxRewriteBytes, JSON or SSE, for the x-mcp-file
// descriptors of the tools' input schemas (fileargs.ParsePage).

// listID is the JSON-RPC id of the gateway's own tools/list calls.
var listID = json.RawMessage(`"mcpblob-gateway-tools-list"`)

// listToolFiles lists the upstream's tools: their file arguments by tool
// name (nil for a tool without any).
func (g *Gateway) listToolFiles(ctx context.Context, q listQuery) (map[string]map[string]fileargs.Spec, error) {
	tools := map[string]map[string]fileargs.Spec{}
	cursor := ""
	for range maxToolPages {
		result, err := g.listPage(ctx, q, cursor)
		if err != nil {
			return nil, err
		}
		page, next, err := fileargs.ParsePage(result)
		if err != nil {
			return nil, err
		}
		maps.Copy(tools, page)
		if cursor = next; cursor == "" {
			break
		}
	}
	return tools, nil
}

// listPage runs one tools/list in q's session and era.
func (g *Gateway) listPage(ctx context.Context, q listQuery, cursor string) (json.RawMessage, error) {
	params := map[string]any{}
	if cursor != "" {
		params["cursor"] = cursor
	}
	if q.modern {
		params["_meta"] = map[string]any{headers.MetaProtocolVersion: q.version, headers.MetaClientCapabilities: map[string]any{}}
	}
	body := mustMarshal(map[string]any{"jsonrpc": "2.0", "id": listID, "method": "tools/list", "params": params})
	req := g.newUpstreamRequest(ctx, http.MethodPost, nil, bytes.NewReader(body), int64(len(body)), q.principal)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if q.version != "" {
		req.Header.Set(headers.ProtocolVersion, q.version)
	}
	if q.session != "" {
		req.Header.Set(headers.SessionID, q.session)
	}
	if q.modern {
		req.Header.Set(headers.Method, "tools/list")
	}
	resp, ue := g.do(req)
	if ue != nil {
		return nil, ue
	}
	defer drainClose(resp.Body)
	mt := mediaType(resp.Header.Get("Content-Type"))
	if resp.StatusCode != http.StatusOK || (mt != "application/json" && mt != "text/event-stream") {
		return nil, fmt.Errorf("tools/list answered HTTP %d (%s)", resp.StatusCode, mt)
	}
	return g.readListAnswer(resp.Body, mt == "text/event-stream")
}

// readListAnswer reads the result of the answer to listID, within
// MaxRewriteBytes: the JSON body, or the SSE event that carries it.
func (g *Gateway) readListAnswer(body io.Reader, sse bool) (json.RawMessage, error) {
	budget := g.opts.MaxRewriteBytes
	if !sse {
		b, err := io.ReadAll(io.LimitReader(body, budget+1))
		if err != nil || int64(len(b)) > budget {
			return nil, errors.New("tools/list answer unreadable or over the gateway's bound")
		}
		return listResult(b)
	}
	br := bufio.NewReaderSize(body, 4<<10)
	for {
		_, data, err := wire.ReadEvent(br, &budget)
		if err != nil {
			return nil, errors.New("tools/list answer ended or over the gateway's bound")
		}
		if res, err := listResult(data); err == nil || !errors.Is(err, errNotOurs) {
			return res, err
		}
	}
}

var errNotOurs = errors.New("not the answer to the gateway's tools/list")

// listResult is the result of the JSON-RPC response b to listID.
func listResult(b []byte) (json.RawMessage, error) {
	var m struct {
		ID     json.RawMessage  `json:"id"`
		Result json.RawMessage  `json:"result"`
		Error  *json.RawMessage `json:"error"`
	}
	if json.Unmarshal(b, &m) != nil || !bytes.Equal(m.ID, listID) {
		return nil, errNotOurs
	}
	if m.Error != nil || m.Result == nil {
		return nil, errors.New("tools/list answered an error")
	}
	return m.Result, nil
}
