package mcptest

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
	"strings"
)

// Message is any JSON-RPC message as received.
type Message struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  json.RawMessage `json:"error,omitempty"`
}

// RPCError is a JSON-RPC error object.
type RPCError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *RPCError) Error() string { return fmt.Sprintf("json-rpc error %d: %s", e.Code, e.Message) }

// RPCError decodes m's error; nil when m is not an error.
func (m Message) RPCError() *RPCError {
	var e RPCError
	if m.Error == nil || json.Unmarshal(m.Error, &e) != nil {
		return nil
	}
	return &e
}

// Response is the answer to one Request, read whole.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
	// Message is the JSON-RPC response to the request (zero when there is
	// none: a 202, a transport error, a resources/stream body).
	Message
	// Before holds the messages an SSE answer sent before the response
	// (notifications and the server's requests).
	Before []Message
	Req    *Request // the request answered; nil for ReadAnswer
}

// Open sends r and returns the response with its body unread; the caller
// closes it.
func (c *Client) Open(r *Request) (*http.Response, error) {
	resp, err := c.HTTP.Do(r.Request)
	if err != nil {
		return nil, fmt.Errorf("mcptest: %s %s: %w", r.Method, r.label(), err)
	}
	return resp, nil
}

// Send sends r and reads the whole answer. A JSON body is decoded into
// Message, and so is the SSE event answering r (the messages before it go
// to Before); the body of a resources/stream answer (marked by
// MCP-Resource-Uri) is left undecoded. A body that does not decode is an
// error, returned with the Response.
func (c *Client) Send(r *Request) (*Response, error) {
	resp, err := c.Open(r)
	if err != nil {
		return nil, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	out := &Response{Status: resp.StatusCode, Header: resp.Header, Body: body, Req: r}
	if err != nil {
		return out, fmt.Errorf("mcptest: %s: reading the answer: %w", r.label(), err)
	}
	return out, out.decode()
}

// ReadAnswer decodes an answer read by other means (a raw request, a
// harness's own connection) as Send decodes one; the Response has no Req.
func ReadAnswer(status int, h http.Header, body []byte) (*Response, error) {
	r := &Response{Status: status, Header: h, Body: body}
	return r, r.decode()
}

func (r *Response) decode() error {
	mt := MediaType(r.Header)
	if r.Header.Get("MCP-Resource-Uri") != "" {
		return nil // a resources/stream answer: the bytes, whatever their type
	}
	switch mt {
	case "application/json":
		if len(bytes.TrimSpace(r.Body)) == 0 {
			return nil
		}
		if err := json.Unmarshal(r.Body, &r.Message); err != nil {
			return fmt.Errorf("%w: %s: bad JSON, status %d: %v: %.300q", ErrMalformed, r.Req.label(), r.Status, err, r.Body)
		}
		return r.Req.checkID(r.Message)
	case "text/event-stream":
		s := &Stream{br: bufio.NewReader(bytes.NewReader(r.Body)), req: r.Req}
		m, before, err := s.Result()
		r.Message, r.Before = m, before
		if err != nil && !errors.Is(err, errNoResponse) {
			return err
		}
	}
	return nil
}

// ToolResult decodes the answer as a CallToolResult; a JSON-RPC error or no
// answer is an error.
func (r *Response) ToolResult() (*ToolResult, error) {
	return r.Message.ToolResult()
}

// ToolResult decodes m as a CallToolResult; a JSON-RPC error is an
// *RPCError.
func (m Message) ToolResult() (*ToolResult, error) {
	if e := m.RPCError(); e != nil {
		return nil, e
	}
	var tr ToolResult
	if m.Result == nil {
		return nil, errors.New("mcptest: no result")
	}
	if err := json.Unmarshal(m.Result, &tr); err != nil {
		return nil, fmt.Errorf("mcptest: not a tool result: %v: %.300s", err, m.Result)
	}
	return &tr, nil
}

// ToolResult is a CallToolResult (or, in 2026-07-28, an
// InputRequiredResult) as received.
type ToolResult struct {
	Content           []Content                  `json:"content"`
	StructuredContent json.RawMessage            `json:"structuredContent"`
	IsError           bool                       `json:"isError"`
	ResultType        string                     `json:"resultType"`
	InputRequests     map[string]InputRequest    `json:"inputRequests"`
	RequestState      string                     `json:"requestState"`
	Meta              map[string]json.RawMessage `json:"_meta"`
}

// Content is one content block.
type Content struct {
	Type     string          `json:"type"`
	Text     string          `json:"text,omitempty"`
	URI      string          `json:"uri,omitempty"`
	MimeType string          `json:"mimeType,omitempty"`
	Data     string          `json:"data,omitempty"`
	Resource json.RawMessage `json:"resource,omitempty"`
}

// InputRequest is one request of an InputRequiredResult.
type InputRequest struct {
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

// Text is the text of the first content block ("" when there is none).
func (tr *ToolResult) Text() string {
	if len(tr.Content) == 0 {
		return ""
	}
	return tr.Content[0].Text
}

// InputRequired reports whether tr is an InputRequiredResult.
func (tr *ToolResult) InputRequired() bool { return tr.ResultType == "input_required" }

// Events sends r, which must be answered with SSE, and returns the stream
// to read message by message; the caller closes it. Another answer is an
// error, with its status and body.
func (c *Client) Events(r *Request) (*Stream, error) {
	resp, err := c.Open(r)
	if err != nil {
		return nil, err
	}
	if MediaType(resp.Header) != "text/event-stream" {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		resp.Body.Close()
		return nil, fmt.Errorf("mcptest: %s: want an SSE answer, got %d %q: %.300s", r.label(), resp.StatusCode,
			resp.Header.Get("Content-Type"), b)
	}
	return &Stream{Response: resp, br: bufio.NewReader(resp.Body), req: r}, nil
}

// NewStream reads the SSE body of r's answer, obtained by other means (a
// raw connection); r may be nil.
func NewStream(body io.Reader, r *Request) *Stream {
	return &Stream{br: bufio.NewReader(body), req: r}
}

// Stream reads the JSON-RPC messages of an SSE answer.
type Stream struct {
	Response *http.Response // nil for a body already read
	// LastEventID is the id of the last event read that had one.
	LastEventID string
	br          *bufio.Reader
	req         *Request
}

// Close closes the answer's body.
func (s *Stream) Close() error {
	if s.Response == nil {
		return nil
	}
	return s.Response.Body.Close()
}

// ReadLine reads one raw line of the stream, end of line included: for
// tests of the SSE framing itself (comments, event ids, retry fields).
func (s *Stream) ReadLine() (string, error) { return s.br.ReadString('\n') }

// Next returns the next message, skipping events without data (priming
// events, keep-alive comments): io.EOF at the end of the stream, another
// read error when the stream broke, an error wrapping ErrMalformed when an
// event's data is not JSON.
func (s *Stream) Next() (Message, error) {
	var data []string
	for {
		line, err := s.br.ReadString('\n')
		if err != nil && line == "" {
			if err == io.EOF && len(data) > 0 {
				return s.message(data)
			}
			return Message{}, err
		}
		line = strings.TrimRight(line, "\r\n")
		if line != "" {
			field, value, _ := strings.Cut(line, ":")
			switch field {
			case "data":
				data = append(data, strings.TrimPrefix(value, " "))
			case "id":
				s.LastEventID = strings.TrimPrefix(value, " ")
			}
			if err == nil {
				continue
			}
		}
		// An event ends at a blank line (or, cut short, at the end).
		if len(data) > 0 && strings.Join(data, "") != "" {
			return s.message(data)
		}
		data = data[:0]
		if err != nil {
			return Message{}, err
		}
	}
}

func (s *Stream) message(data []string) (Message, error) {
	d := strings.Join(data, "\n")
	var m Message
	if err := json.Unmarshal([]byte(d), &m); err != nil {
		return Message{}, fmt.Errorf("%w: SSE data %.300q: %v", ErrMalformed, d, err)
	}
	return m, nil
}

var errNoResponse = errors.New("the stream ended without a response")

// ErrMalformed is what an answer that is not JSON-RPC is (wrapped in the
// error Send, Next and Result return); other errors are the transport's.
var ErrMalformed = errors.New("mcptest: malformed answer")

// Result reads up to the response to the stream's request and returns it
// with the messages sent before it.
func (s *Stream) Result() (Message, []Message, error) {
	var before []Message
	for {
		m, err := s.Next()
		if err == io.EOF {
			return Message{}, before, fmt.Errorf("mcptest: %s: %w", s.req.label(), errNoResponse)
		}
		if err != nil {
			return Message{}, before, err
		}
		if m.Method != "" {
			before = append(before, m)
			continue
		}
		return m, before, s.req.checkID(m)
	}
}

// MediaType is the media type of h's Content-Type, without parameters.
func MediaType(h http.Header) string {
	mt, _, _ := mime.ParseMediaType(h.Get("Content-Type"))
	return mt
}

// checkID reports an answer to a request other than r.
func (r *Request) checkID(m Message) error {
	if r != nil && r.ID != nil && m.ID != nil && m.Method == "" && !bytes.Equal(m.ID, r.ID) {
		return fmt.Errorf("mcptest: %s: answer id %s, want %s", r.label(), m.ID, r.ID)
	}
	return nil
}

func (r *Request) label() string {
	if r == nil {
		return "answer"
	}
	if r.RPCMethod != "" {
		return r.RPCMethod
	}
	return r.Method + " " + r.URL.Path
}

// Call sends one request and reads the answer.
func (c *Client) Call(ctx context.Context, method, params string) (*Response, error) {
	return c.Send(c.NewRequest(ctx, method, params))
}

// CallTool calls tool name with args, a JSON object sent as is (member
// order matters to a streaming server).
func (c *Client) CallTool(ctx context.Context, name, args string) (*Response, error) {
	return c.Call(ctx, "tools/call", `{"name":`+jsonString(name)+`,"arguments":`+args+`}`)
}

// Notify sends a notification (a server answers 202).
func (c *Client) Notify(ctx context.Context, method, params string) (*Response, error) {
	return c.Send(c.NewNotification(ctx, method, params))
}

// Reply answers the server's request id with result, a JSON value.
func (c *Client) Reply(ctx context.Context, id json.RawMessage, result string) (*Response, error) {
	return c.Send(c.NewReply(ctx, id, result))
}

// Get opens the 2025-11-25 session's SSE stream (lastEventID resumes one).
func (c *Client) Get(ctx context.Context, lastEventID string) (*Stream, error) {
	return c.Events(c.NewGet(ctx, lastEventID))
}

// Delete ends the 2025-11-25 session.
func (c *Client) Delete(ctx context.Context) (*Response, error) {
	return c.Send(c.NewDelete(ctx))
}
