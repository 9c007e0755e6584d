package mcptest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync/atomic"
)

// The protocol versions a Client speaks.
const (
	Version20251125 = "2025-11-25" // initialize, Mcp-Session-Id
	Version20260728 = "2026-07-28" // stateless, per-request _meta
)

// Client talks to one MCP endpoint in one era. Its fields may be set
// before the first request; [Client.With] and [Client.WithBearer] give
// copies that share the session and the request ids.
type Client struct {
	Endpoint string       // the MCP endpoint, e.g. http://127.0.0.1:8080/mcp
	HTTP     *http.Client // see [NewHTTPClient]
	Version  string       // Version20251125 or Version20260728
	// Capabilities is the client capabilities object (JSON), "{}" when
	// empty: in initialize (2025-11-25) or every request's _meta
	// (2026-07-28).
	Capabilities string
	// Header is set on every request after the client's own headers
	// (initialize included); an empty value removes a header.
	Header map[string]string
	// Session is the 2025-11-25 session id, set by Connect ("" when the
	// server assigned none).
	Session string
	// Init is the answer to initialize (2025-11-25) or server/discover
	// (2026-07-28), set by Connect.
	Init *Response

	ids         *atomic.Int64
	initialized bool // initialize succeeded: later requests carry the version
}

// New returns a client of version for endpoint with [NewHTTPClient]. A
// 2025-11-25 client must Connect before anything else.
func New(endpoint, version string) *Client {
	return &Client{Endpoint: endpoint, HTTP: NewHTTPClient(), Version: version, ids: new(atomic.Int64)}
}

// NewHTTPClient is an http.Client that does not follow redirects and asks
// for no compression.
func NewHTTPClient() *http.Client {
	return &http.Client{
		Transport:     &http.Transport{Proxy: nil, DisableCompression: true, MaxIdleConnsPerHost: 16},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// With returns a copy of c that also sets h's headers on every request (an
// empty value removes one). It shares c's session and ids.
func (c *Client) With(h map[string]string) *Client {
	d := *c
	d.Header = make(map[string]string, len(c.Header)+len(h))
	for k, v := range c.Header {
		d.Header[k] = v
	}
	for k, v := range h {
		d.Header[k] = v
	}
	return &d
}

// WithBearer is With an Authorization: Bearer token header.
func (c *Client) WithBearer(token string) *Client {
	return c.With(map[string]string{"Authorization": "Bearer " + token})
}

// Modern reports whether c speaks 2026-07-28.
func (c *Client) Modern() bool { return c.Version == Version20260728 }

// Connect opens the client's session: initialize and
// notifications/initialized in 2025-11-25, server/discover in 2026-07-28.
// An answer that is not a result is an error (the answer is still in
// c.Init).
func (c *Client) Connect(ctx context.Context) error {
	switch c.Version {
	case Version20260728:
		res, err := c.Call(ctx, "server/discover", "")
		c.Init = res
		if err == nil && res.Result == nil {
			err = fmt.Errorf("mcptest: server/discover: status %d: %.300s", res.Status, res.Body)
		}
		return err
	case Version20251125:
		return c.initialize(ctx)
	}
	return fmt.Errorf("mcptest: unknown protocol version %q", c.Version)
}

func (c *Client) initialize(ctx context.Context) error {
	res, err := c.Call(ctx, "initialize", `{"protocolVersion":"`+Version20251125+`","capabilities":`+c.caps()+
		`,"clientInfo":{"name":"mcptest","version":"1"}}`)
	c.Init = res
	if err != nil {
		return err
	}
	c.Session = res.Header.Get("Mcp-Session-Id") // a server may run without sessions
	if res.Status != http.StatusOK || res.Result == nil {
		return fmt.Errorf("mcptest: initialize: status %d: %.300s", res.Status, res.Body)
	}
	c.initialized = true
	var init struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	if err := json.Unmarshal(res.Result, &init); err != nil || init.ProtocolVersion != Version20251125 {
		return fmt.Errorf("mcptest: initialize: result %.300s", res.Result)
	}
	n, err := c.Notify(ctx, "notifications/initialized", "")
	if err != nil {
		return err
	}
	if n.Status != http.StatusAccepted {
		return fmt.Errorf("mcptest: notifications/initialized: status %d: %.300s", n.Status, n.Body)
	}
	return nil
}

func (c *Client) caps() string {
	if c.Capabilities == "" {
		return "{}"
	}
	return c.Capabilities
}

func (c *Client) nextID() string {
	if c.ids == nil {
		c.ids = new(atomic.Int64)
	}
	return fmt.Sprint(c.ids.Add(1))
}
