package load

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/mcpblob/mcpblob/core/mcp/mcptest"
	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// Protocol is the MCP revision the load speaks (mcpblob and the peer SDK
// servers all do).
const Protocol = mcptest.Version20251125

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

// Open runs initialize and notifications/initialized on endpoint (the
// client is core/mcp/mcptest's).
func Open(ctx context.Context, endpoint, apiKey string, clientCaps map[string]any) (*Session, error) {
	c := mcptest.New(endpoint, Protocol)
	c.HTTP = http.DefaultClient
	if apiKey != "" {
		c = c.WithBearer(apiKey)
	}
	if clientCaps != nil {
		b, err := json.Marshal(clientCaps)
		if err != nil {
			return nil, err
		}
		c.Capabilities = string(b)
	}
	if err := c.Connect(ctx); err != nil {
		return nil, err
	}
	s := &Session{Endpoint: endpoint, ID: c.Session, APIKey: apiKey}
	var res struct {
		Capabilities map[string]any `json:"capabilities"`
	}
	if err := json.Unmarshal(c.Init.Result, &res); err != nil {
		return nil, fmt.Errorf("initialize answer: %w", err)
	}
	s.Capabilities = res.Capabilities
	return s, nil
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
