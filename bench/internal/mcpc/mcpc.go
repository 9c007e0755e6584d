// Package mcpc is the small MCP client the benchmarks drive servers with:
// Streamable HTTP, protocol 2025-11-25 (which every system under test
// speaks), one session, raw access to the response body so large results
// can be timed without being held.
package mcpc

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"time"
)

// Protocol is the MCP protocol version the client negotiates.
const Protocol = "2025-11-25"

// Client talks to one MCP endpoint.
type Client struct {
	Endpoint string // e.g. http://127.0.0.1:8080/mcp
	HTTP     *http.Client
	Session  string          // Mcp-Session-Id, set by Init
	Caps     json.RawMessage // server capabilities, set by Init
	id       atomic.Int64
}

// NewHTTPClient is an HTTP client tuned for loopback bulk transfers: no
// compression, large socket buffers, kept-alive connections.
func NewHTTPClient() *http.Client {
	d := &net.Dialer{Timeout: 5 * time.Second}
	return &http.Client{Transport: &http.Transport{
		DialContext:         d.DialContext,
		DisableCompression:  true,
		MaxIdleConnsPerHost: 16,
		ReadBufferSize:      256 << 10,
		WriteBufferSize:     256 << 10,
		ForceAttemptHTTP2:   false,
	}}
}

// New returns a client for endpoint; call Init before anything else.
func New(endpoint string) *Client {
	return &Client{Endpoint: endpoint, HTTP: NewHTTPClient()}
}

// Init runs initialize (declaring clientCaps, which may be nil) and sends
// notifications/initialized.
func (c *Client) Init(ctx context.Context, clientCaps map[string]any) error {
	if clientCaps == nil {
		clientCaps = map[string]any{}
	}
	var res struct {
		Capabilities json.RawMessage `json:"capabilities"`
	}
	resp, err := c.Post(ctx, "initialize", map[string]any{
		"protocolVersion": Protocol,
		"capabilities":    clientCaps,
		"clientInfo":      map[string]string{"name": "mcpblob-bench", "version": "1"},
	})
	if err != nil {
		return err
	}
	c.Session = resp.Header.Get("Mcp-Session-Id")
	if err := Decode(resp, &res); err != nil {
		return fmt.Errorf("mcpc: initialize: %w", err)
	}
	c.Caps = res.Capabilities
	resp, err = c.post(ctx, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	if err != nil {
		return err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return nil
}

// Post sends one request and returns the raw response; the caller closes its body.
func (c *Client) Post(ctx context.Context, method string, params any) (*http.Response, error) {
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": c.id.Add(1), "method": method, "params": params})
	if err != nil {
		return nil, err
	}
	return c.post(ctx, body)
}

// PostBody sends a request whose body the caller supplies (for bodies too
// large to build with encoding/json); size is its length.
func (c *Client) PostBody(ctx context.Context, body io.Reader, size int64) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.Endpoint, body)
	if err != nil {
		return nil, err
	}
	req.ContentLength = size
	c.headers(req)
	return c.HTTP.Do(req)
}

func (c *Client) post(ctx context.Context, body []byte) (*http.Response, error) {
	return c.PostBody(ctx, bytes.NewReader(body), int64(len(body)))
}

func (c *Client) headers(req *http.Request) {
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", Protocol)
	if c.Session != "" {
		req.Header.Set("Mcp-Session-Id", c.Session)
	}
}

// NextID returns a fresh JSON-RPC id.
func (c *Client) NextID() int64 { return c.id.Add(1) }

// Call sends one request and decodes its result into out (which may be nil).
func (c *Client) Call(ctx context.Context, method string, params, out any) error {
	resp, err := c.Post(ctx, method, params)
	if err != nil {
		return err
	}
	if err := Decode(resp, out); err != nil {
		return fmt.Errorf("mcpc: %s: %w", method, err)
	}
	return nil
}

// RPCError is a JSON-RPC error answer.
type RPCError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func (e *RPCError) Error() string { return fmt.Sprintf("json-rpc error %d: %s", e.Code, e.Message) }

// Decode reads a JSON or SSE response (200 or 202) holding one JSON-RPC
// answer, closes its body and decodes the result into out (which may be
// nil); a JSON-RPC error is an *RPCError.
func Decode(resp *http.Response, out any) error {
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusAccepted {
		return fmt.Errorf("http %d: %s", resp.StatusCode, truncate(body))
	}
	msg, err := Message(resp.Header.Get("Content-Type"), body)
	if err != nil {
		return err
	}
	var env struct {
		Result json.RawMessage `json:"result"`
		Error  *RPCError       `json:"error"`
	}
	if err := json.Unmarshal(msg, &env); err != nil {
		return fmt.Errorf("bad answer %s: %w", truncate(msg), err)
	}
	if env.Error != nil {
		return env.Error
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(env.Result, out)
}

// Message extracts the JSON-RPC answer from a JSON body, or from the SSE
// event carrying an "id" (skipping notifications and keep-alive comments).
func Message(contentType string, body []byte) ([]byte, error) {
	if !strings.HasPrefix(contentType, "text/event-stream") {
		return body, nil
	}
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(nil, len(body)+1)
	var data []byte
	for sc.Scan() {
		line := sc.Bytes()
		switch {
		case bytes.HasPrefix(line, []byte("data:")):
			data = append(data, bytes.TrimPrefix(bytes.TrimPrefix(line, []byte("data:")), []byte(" "))...)
		case len(line) == 0 && len(data) > 0:
			if bytes.Contains(data, []byte(`"id"`)) {
				return data, nil
			}
			data = data[:0]
		}
	}
	if len(data) > 0 {
		return data, nil
	}
	return nil, errors.New("no JSON-RPC answer in the event stream")
}

func truncate(b []byte) string {
	if len(b) > 300 {
		return string(b[:300]) + "…"
	}
	return string(b)
}

// ReadDiscard runs resources/read of uri and discards the answer, returning
// the number of body bytes received. A non-200 status is an error.
func (c *Client) ReadDiscard(ctx context.Context, uri string, buf []byte) (int64, error) {
	resp, err := c.Post(ctx, "resources/read", map[string]string{"uri": uri})
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	n, err := io.CopyBuffer(io.Discard, onlyReader{resp.Body}, buf)
	if err != nil {
		return n, err
	}
	if resp.StatusCode != http.StatusOK {
		return n, fmt.Errorf("mcpc: resources/read %s: http %d", uri, resp.StatusCode)
	}
	return n, nil
}

// ReadSHA256 runs resources/read of uri, decodes the first blob content and
// returns its length and hex sha256. It holds the whole answer: use it on
// small blobs to check integrity, not for timing.
func (c *Client) ReadSHA256(ctx context.Context, uri string) (int, string, error) {
	var res struct {
		Contents []struct {
			Blob string `json:"blob"`
		} `json:"contents"`
	}
	if err := c.Call(ctx, "resources/read", map[string]string{"uri": uri}, &res); err != nil {
		return 0, "", err
	}
	if len(res.Contents) == 0 {
		return 0, "", errors.New("mcpc: resources/read: no contents")
	}
	raw, err := base64.StdEncoding.DecodeString(res.Contents[0].Blob)
	if err != nil {
		return 0, "", err
	}
	sum := sha256.Sum256(raw)
	return len(raw), hex.EncodeToString(sum[:]), nil
}

// ToolNames lists the server's tools.
func (c *Client) ToolNames(ctx context.Context) ([]string, error) {
	var res struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	if err := c.Call(ctx, "tools/list", map[string]any{}, &res); err != nil {
		return nil, err
	}
	names := make([]string, len(res.Tools))
	for i, t := range res.Tools {
		names[i] = t.Name
	}
	return names, nil
}

// HasResourceStream reports whether the server declared resources.stream.
func (c *Client) HasResourceStream() bool {
	var caps struct {
		Resources struct {
			Stream bool `json:"stream"`
		} `json:"resources"`
	}
	json.Unmarshal(c.Caps, &caps)
	return caps.Resources.Stream
}

// onlyReader hides WriterTo/ReaderFrom so CopyBuffer uses the given buffer.
type onlyReader struct{ io.Reader }
