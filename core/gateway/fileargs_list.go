package gateway

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"

	"github.com/mcpblob/mcpblob/core/mcp/headers"
)

// The gateway's own tools/list: every page (up to maxToolPages), each
// answer read within MaxRewriteBytes, JSON or SSE, for the x-mcp-file
// descriptors of the tools' input schemas.

// listID is the JSON-RPC id of the gateway's own tools/list calls.
var listID = json.RawMessage(`"mcpblob-gateway-tools-list"`)

// toolsPage is the part of a tools/list result the gateway reads.
type toolsPage struct {
	Tools []struct {
		Name        string `json:"name"`
		InputSchema struct {
			Properties map[string]schemaProp `json:"properties"`
		} `json:"inputSchema"`
	} `json:"tools"`
	NextCursor string `json:"nextCursor"`
}

// schemaProp is an input schema property, as far as the gateway reads it.
type schemaProp struct {
	File json.RawMessage `json:"x-mcp-file"`
}

// listToolFiles lists the upstream's tools: their file arguments by tool
// name (nil for a tool without any).
func (g *Gateway) listToolFiles(ctx context.Context, q listQuery) (map[string]map[string]fileSpec, error) {
	tools := map[string]map[string]fileSpec{}
	cursor := ""
	for range maxToolPages {
		page, err := g.listPage(ctx, q, cursor)
		if err != nil {
			return nil, err
		}
		for _, t := range page.Tools {
			tools[t.Name] = pageFileSpecs(t.InputSchema.Properties)
		}
		if cursor = page.NextCursor; cursor == "" {
			break
		}
	}
	return tools, nil
}

// pageFileSpecs reads the x-mcp-file descriptors of a schema's properties.
func pageFileSpecs(props map[string]schemaProp) map[string]fileSpec {
	var out map[string]fileSpec
	for name, p := range props {
		if len(p.File) == 0 || string(p.File) == "null" || string(p.File) == "false" {
			continue
		}
		var spec fileSpec
		_ = json.Unmarshal(p.File, &spec) // `true` or a malformed object: a file, not bounded
		if out == nil {
			out = map[string]fileSpec{}
		}
		out[name] = spec
	}
	return out
}

// listPage runs one tools/list in q's session and era.
func (g *Gateway) listPage(ctx context.Context, q listQuery, cursor string) (*toolsPage, error) {
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
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if resp.StatusCode != http.StatusOK || (mt != "application/json" && mt != "text/event-stream") {
		return nil, fmt.Errorf("tools/list answered HTTP %d (%s)", resp.StatusCode, mt)
	}
	result, err := g.readListAnswer(resp.Body, mt == "text/event-stream")
	if err != nil {
		return nil, err
	}
	var page toolsPage
	if err := json.Unmarshal(result, &page); err != nil {
		return nil, errors.New("tools/list result is not a list of tools")
	}
	return &page, nil
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
		_, data, err := readEvent(br, &budget)
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
