package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// Sentinels matched by errors.Is against an *Error's code.
var (
	ErrNotFound     = errors.New("client: blob not found")
	ErrUnauthorized = errors.New("client: unauthorized")
	ErrExists       = errors.New("client: blob already exists")
	ErrInvalidKey   = errors.New("client: invalid key")
	ErrChecksum     = errors.New("client: checksum mismatch")
)

var codeSentinels = map[string]error{
	"not_found":         ErrNotFound,
	"unauthorized":      ErrUnauthorized,
	"exists":            ErrExists,
	"invalid_key":       ErrInvalidKey,
	"checksum_mismatch": ErrChecksum,
}

// Error is an error answered by the server: its HTTP status and the code and
// message of its JSON error body.
type Error struct {
	Status  int
	Code    string
	Message string
	// RetryAfter is the answer's Retry-After in seconds (0 when absent).
	RetryAfter int
}

func (e *Error) Error() string {
	return fmt.Sprintf("client: server answered %d %s: %s", e.Status, e.Code, e.Message)
}

// Is reports whether target is the sentinel for e's code.
func (e *Error) Is(target error) bool {
	s, ok := codeSentinels[e.Code]
	return ok && s == target
}

// Options configure a Client. The zero value uses http.DefaultClient and no API key.
type Options struct {
	HTTPClient *http.Client
	APIKey     string // sent as "Authorization: Bearer <APIKey>"
	UserAgent  string // default "mcpblob-client"
}

// Client talks to one mcpblob server.
type Client struct {
	base *url.URL
	opts Options
}

// New returns a client for the server at base (for example http://127.0.0.1:8080).
func New(base string, opts Options) (*Client, error) {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("client: server URL %q: want http(s)://host[:port]", base)
	}
	u.Path = strings.TrimSuffix(u.Path, "/")
	if opts.HTTPClient == nil {
		opts.HTTPClient = http.DefaultClient
	}
	if opts.UserAgent == "" {
		opts.UserAgent = "mcpblob-client"
	}
	return &Client{base: u, opts: opts}, nil
}

// blobURL is the /v1/blobs URL of key, each segment escaped and the slashes kept.
func (c *Client) blobURL(key string) string {
	segs := strings.Split(key, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return c.base.String() + "/v1/blobs/" + strings.Join(segs, "/")
}

func (c *Client) newRequest(ctx context.Context, method, url string, body io.Reader) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, method, url, body)
	if err != nil {
		return nil, fmt.Errorf("client: %s %s: %w", method, url, err)
	}
	if c.opts.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.opts.APIKey)
	}
	req.Header.Set("User-Agent", c.opts.UserAgent)
	return req, nil
}

// do sends req and turns a non-2xx answer (other than those listed in ok)
// into an *Error. On success the caller owns resp.Body.
func (c *Client) do(req *http.Request, ok ...int) (*http.Response, error) {
	resp, err := c.opts.HTTPClient.Do(req)
	if err != nil {
		// net/http's *url.Error repeats the method and URL this message
		// already names: wrap what it wraps.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("client: %s %s: %w", req.Method, req.URL.Redacted(), err)
	}
	if resp.StatusCode/100 == 2 {
		return resp, nil
	}
	for _, s := range ok {
		if resp.StatusCode == s {
			return resp, nil
		}
	}
	defer resp.Body.Close()
	return nil, decodeError(resp)
}

func decodeError(resp *http.Response) error {
	var body struct {
		Error struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if json.Unmarshal(raw, &body) != nil || body.Error.Code == "" {
		// HEAD answers and foreign proxies carry no JSON body: derive a code.
		body.Error.Code = statusCode(resp.StatusCode)
		body.Error.Message = strings.TrimSpace(string(raw))
		if body.Error.Message == "" {
			body.Error.Message = http.StatusText(resp.StatusCode)
		}
	}
	retry, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
	return &Error{Status: resp.StatusCode, Code: body.Error.Code, Message: body.Error.Message, RetryAfter: max(retry, 0)}
}

func statusCode(status int) string {
	switch status {
	case http.StatusNotFound:
		return "not_found"
	case http.StatusUnauthorized, http.StatusForbidden:
		return "unauthorized"
	case http.StatusPreconditionFailed:
		return "exists"
	case http.StatusRequestEntityTooLarge:
		return "too_large"
	case http.StatusRequestedRangeNotSatisfiable:
		return "range_not_satisfiable"
	default:
		return "http_" + fmt.Sprint(status)
	}
}

// doJSON sends in as a JSON body (when non-nil) and decodes the answer into out.
func (c *Client) doJSON(ctx context.Context, method, url string, in, out any) error {
	var body io.Reader
	if in != nil {
		raw, err := json.Marshal(in)
		if err != nil {
			return fmt.Errorf("client: encode request: %w", err)
		}
		body = strings.NewReader(string(raw))
	}
	req, err := c.newRequest(ctx, method, url, body)
	if err != nil {
		return err
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if out == nil {
		return nil
	}
	if err := decodeJSON(resp.Body, out); err != nil {
		return fmt.Errorf("client: %s %s: %w", method, url, err)
	}
	return nil
}
