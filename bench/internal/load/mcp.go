package load

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// Protocol is the MCP revision the load speaks (mcpblob and the peer SDK
// servers all do).
const Protocol = "2025-11-25"

// Session is one MCP session every request of a scenario shares.
type Session struct {
	Endpoint     string // e.g. http://127.0.0.1:8080/mcp
	ID           string // Mcp-Session-Id; "" when the server runs sessionless
	APIKey       string // sent as a bearer token when set
	Capabilities map[string]any
}

// nextID numbers every JSON-RPC request of the process: a server may
// refuse an id already in flight on a session (go-sdk does).
var nextID atomic.Uint64

// Header is the request header of an MCP POST on s.
func (s *Session) Header() http.Header {
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "application/json, text/event-stream")
	h.Set("MCP-Protocol-Version", Protocol)
	if s.ID != "" {
		h.Set("Mcp-Session-Id", s.ID)
	}
	if s.APIKey != "" {
		h.Set("Authorization", "Bearer "+s.APIKey)
	}
	return h
}

// RPC is a JSON-RPC request with a fresh id.
func RPC(method string, params any) []byte {
	if params == nil {
		params = map[string]any{}
	}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": nextID.Add(1), "method": method, "params": params})
	return b
}

// Open runs initialize and notifications/initialized on endpoint.
func Open(ctx context.Context, endpoint, apiKey string, clientCaps map[string]any) (*Session, error) {
	s := &Session{Endpoint: endpoint, APIKey: apiKey}
	if clientCaps == nil {
		clientCaps = map[string]any{}
	}
	res, body, err := s.post(ctx, RPC("initialize", map[string]any{
		"protocolVersion": Protocol, "capabilities": clientCaps,
		"clientInfo": map[string]any{"name": "mcpblob-load", "version": "1"},
	}))
	if err != nil {
		return nil, fmt.Errorf("initialize: %w", err)
	}
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("initialize: http %d: %.300s", res.StatusCode, body)
	}
	s.ID = res.Header.Get("Mcp-Session-Id")
	var msg struct {
		Result struct {
			Capabilities map[string]any `json:"capabilities"`
		} `json:"result"`
	}
	if err := json.Unmarshal(jsonOf(body), &msg); err != nil {
		return nil, fmt.Errorf("initialize answer: %w", err)
	}
	s.Capabilities = msg.Result.Capabilities
	res, body, err = s.post(ctx, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	if err != nil {
		return nil, fmt.Errorf("notifications/initialized: %w", err)
	}
	if res.StatusCode/100 != 2 {
		return nil, fmt.Errorf("notifications/initialized: http %d: %.300s", res.StatusCode, body)
	}
	return s, nil
}

func (s *Session) post(ctx context.Context, body []byte) (*http.Response, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.Endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, nil, err
	}
	req.Header = s.Header()
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	return res, b, err
}

// Call is a Targeter of MCP requests on s: each hit asks params(seq) for
// its method and parameters (seq counts the hits from 0) and gets a fresh id.
func (s *Session) Call(params func(seq uint64) (method string, p any)) vegeta.Targeter {
	var seq atomic.Uint64
	return func(t *vegeta.Target) error {
		method, p := params(seq.Add(1) - 1)
		t.Method, t.URL, t.Body, t.Header = http.MethodPost, s.Endpoint, RPC(method, p), s.Header()
		t.Header.Set(KindHeader, method)
		return nil
	}
}

// Read is the params of resources/read of blob:///key.
func Read(key string) map[string]any { return map[string]any{"uri": "blob:///" + key} }

// jsonOf is the JSON-RPC message of an answer body: the body itself, or
// the data of the SSE event that carries an id.
func jsonOf(b []byte) []byte {
	if !bytes.HasPrefix(bytes.TrimSpace(b), []byte("event:")) && !bytes.HasPrefix(bytes.TrimSpace(b), []byte("data:")) && !bytes.HasPrefix(bytes.TrimSpace(b), []byte("id:")) {
		return b
	}
	var data []byte
	for line := range strings.Lines(string(b)) {
		line = strings.TrimRight(line, "\r\n")
		if d, ok := strings.CutPrefix(line, "data:"); ok {
			data = append(data, strings.TrimPrefix(d, " ")...)
		} else if line == "" && len(data) > 0 {
			if bytes.Contains(data, []byte(`"id"`)) {
				return data
			}
			data = nil
		}
	}
	return data
}

// RPCClass is the error class of a JSON-RPC answer r: its HTTP status
// when not 200, "jsonrpc error CODE" when the answer is an error, "tool
// isError" for a tools/call whose result says so, "" when it is a result.
// Only the start of the answer is read (where "result" or "error" comes,
// before any payload), so checking costs little beside the request; the
// length checks (ReadClass, exactLength) catch a cut answer.
func RPCClass(r *vegeta.Result, b *Body) string {
	if r.Code != http.StatusOK {
		return "http " + strconv.Itoa(int(r.Code))
	}
	msg := jsonOf(r.Body)
	head := msg[:min(len(msg), 256)]
	e, res := bytes.Index(head, []byte(`"error":`)), bytes.Index(head, []byte(`"result":`))
	switch {
	case e >= 0 && (res < 0 || e < res):
		var m struct {
			Error struct {
				Code int `json:"code"`
			} `json:"error"`
		}
		json.Unmarshal(msg, &m) //nolint:errcheck // a cut error answer still is one
		return fmt.Sprintf("jsonrpc error %d", m.Error.Code)
	case res < 0:
		return "jsonrpc: no result at the start of the answer"
	case bytes.Contains(msg, []byte(`"isError":true`)):
		return "tool isError"
	}
	return ""
}

// ReadClass checks a resources/read answer of a blob of size bytes: a
// JSON-RPC result whose body is at least the blob's base64 length.
func ReadClass(size int64) func(*vegeta.Result, *Body) string {
	return func(r *vegeta.Result, b *Body) string {
		if c := RPCClass(r, b); c != "" {
			return c
		}
		if b.N < 4*((size+2)/3) {
			return "read: answer shorter than the blob's base64"
		}
		return ""
	}
}
