// Package mcpc is what the benchmarks drive MCP servers with: the protocol
// client is core/mcp/mcptest's (2025-11-25, which every system under test
// speaks); mcpc adds a loopback-tuned HTTP client, params given as Go
// values, and reads that time large answers without holding them.
package mcpc

import (
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
	"time"

	"github.com/mcpblob/mcpblob/core/mcp/mcptest"
)

// Protocol is the MCP protocol version the client negotiates.
const Protocol = mcptest.Version20251125

// Client talks to one MCP endpoint; Session (Mcp-Session-Id) is set by Init.
type Client struct {
	*mcptest.Client
	Caps json.RawMessage // server capabilities, set by Init
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
	c := mcptest.New(endpoint, Protocol)
	c.HTTP = NewHTTPClient()
	return &Client{Client: c}
}

// Init runs initialize (declaring clientCaps, which may be nil) and sends
// notifications/initialized.
func (c *Client) Init(ctx context.Context, clientCaps map[string]any) error {
	if clientCaps != nil {
		b, err := json.Marshal(clientCaps)
		if err != nil {
			return err
		}
		c.Capabilities = string(b)
	}
	if err := c.Connect(ctx); err != nil {
		return fmt.Errorf("mcpc: %w", err)
	}
	var res struct {
		Capabilities json.RawMessage `json:"capabilities"`
	}
	if err := json.Unmarshal(c.Client.Init.Result, &res); err != nil {
		return fmt.Errorf("mcpc: initialize: %w", err)
	}
	c.Caps = res.Capabilities
	return nil
}

// Post sends one request and returns the raw response; the caller closes its body.
func (c *Client) Post(ctx context.Context, method string, params any) (*http.Response, error) {
	p, err := json.Marshal(params)
	if err != nil {
		return nil, err
	}
	return c.Open(c.NewRequest(ctx, method, string(p)))
}

// PostBody sends a request whose body the caller supplies (for bodies too
// large to build with encoding/json); size is its length.
func (c *Client) PostBody(ctx context.Context, body io.Reader, size int64) (*http.Response, error) {
	return c.Open(c.NewRaw(ctx, body, size))
}

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
type RPCError = mcptest.RPCError

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
	r, err := mcptest.ReadAnswer(resp.StatusCode, resp.Header, body)
	if err != nil {
		return err
	}
	if e := r.RPCError(); e != nil {
		return e
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(r.Result, out)
}

// Message extracts the JSON-RPC answer from a JSON body, or from an SSE
// body the first message carrying an id (the response, or a request of the
// server's), else the last message.
func Message(contentType string, body []byte) ([]byte, error) {
	if !strings.HasPrefix(contentType, "text/event-stream") {
		return body, nil
	}
	r, err := mcptest.ReadAnswer(http.StatusOK, http.Header{"Content-Type": {contentType}}, body)
	if err != nil {
		return nil, err
	}
	msgs := append(r.Before, r.Message)
	for _, m := range msgs {
		if m.ID != nil {
			return json.Marshal(m)
		}
	}
	if len(r.Before) > 0 {
		return json.Marshal(r.Before[len(r.Before)-1])
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
