package jsonrpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/mcpblob/mcpblob/core/mcp/scan"
)

// JSON-RPC and MCP error codes (docs/protocol.md, "Error codes").
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	CodeInternalError  = -32603
	// CodeTransport and CodeSessionNotFound are implementation-defined
	// (-32000…-32019), chosen to match the TypeScript SDK.
	CodeTransport       = -32000
	CodeSessionNotFound = -32001
	// CodeResourceNotFound is the 2025-11-25 resource-not-found code; the
	// 2026-07-28 era uses CodeInvalidParams instead (SEP-2164).
	CodeResourceNotFound       = -32002
	CodeHeaderMismatch         = -32020
	CodeMissingCapability      = -32021
	CodeUnsupportedVersion     = -32022
	CodeURLElicitationRequired = -32042
)

// Error is a JSON-RPC error object. It implements error so method handlers
// can return it; Status, when non-zero, is the HTTP status used when the error
// is the whole response.
type Error struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
	Status  int    `json:"-"`
	// Header holds HTTP response headers a standalone error response
	// carries (a WWW-Authenticate challenge, say); nil for none.
	Header map[string]string `json:"-"`
}

func (e *Error) Error() string { return fmt.Sprintf("mcp: jsonrpc error %d: %s", e.Code, e.Message) }

// NewError returns an error object without an HTTP status.
func NewError(code int, msg string, data any) *Error {
	return &Error{Code: code, Message: msg, Data: data}
}

// WithStatus returns a copy of e that carries the HTTP status status.
func (e *Error) WithStatus(status int) *Error { c := *e; c.Status = status; return &c }

// WithHeader returns a copy of e whose standalone response also carries
// the HTTP header name: value.
func (e *Error) WithHeader(name, value string) *Error {
	c := *e
	c.Header = make(map[string]string, len(e.Header)+1)
	for k, v := range e.Header {
		c.Header[k] = v
	}
	c.Header[name] = value
	return &c
}

// InvalidParams is a -32602 error with a formatted message.
func InvalidParams(format string, args ...any) *Error {
	return NewError(CodeInvalidParams, fmt.Sprintf(format, args...), nil)
}

// HTTPStatus is the status a standalone error response carries: Status, or
// 200 when it is zero.
func (e *Error) HTTPStatus() int {
	if e.Status != 0 {
		return e.Status
	}
	return http.StatusOK
}

// BadRequest is the -32600 error (HTTP 400) for a message that is not valid
// JSON-RPC, saying why.
func BadRequest(why string) *Error {
	return NewError(CodeInvalidRequest, "Invalid Request: "+why, nil).WithStatus(http.StatusBadRequest)
}

// Message is any JSON-RPC 2.0 message as scanned. ID keeps the sender's
// bytes so responses echo them exactly; nil means absent.
type Message struct {
	ID     json.RawMessage
	Method string
	Params json.RawMessage
	Result json.RawMessage
	Error  json.RawMessage
	// ParamFields, Meta and Args are the members of params, params._meta
	// and params.arguments (scan.Message); Files the strings taken out.
	ParamFields, Meta, Args map[string]json.RawMessage
	Files                   *scan.Files
}

// Kind says what a message is.
type Kind int

// Message kinds.
const (
	KindRequest Kind = iota
	KindNotification
	KindResponse
)

// Parse reads one JSON-RPC message from what the scanner found, without
// decoding it again. Batches (arrays) are rejected: every supported
// protocol version since 2025-06-18 forbids them and mcpblob does not
// implement 2025-03-26 batching. On an error the message, when not nil,
// holds what was read (its ID, when valid, is the one to answer).
func Parse(sm *scan.Message) (*Message, Kind, *Error) {
	body := bytes.TrimSpace(sm.Raw)
	switch {
	case len(body) == 0:
		return nil, 0, NewError(CodeParseError, "Parse error: empty body", nil).WithStatus(http.StatusBadRequest)
	case body[0] != '{' && !json.Valid(body):
		// The scanner validated objects as they arrived; anything else
		// was held as it came.
		return nil, 0, NewError(CodeParseError, "Parse error: invalid JSON", nil).WithStatus(http.StatusBadRequest)
	case body[0] == '[':
		return nil, 0, BadRequest("batch arrays are not supported")
	case body[0] != '{':
		return nil, 0, BadRequest("not a JSON-RPC object")
	}
	f := sm.Fields
	m := &Message{ID: f["id"], Params: f["params"], Result: f["result"], Error: f["error"],
		ParamFields: sm.Params, Meta: sm.Meta, Args: sm.Args, Files: sm.Files}
	if raw, ok := f["method"]; ok {
		if len(raw) == 0 || raw[0] != '"' {
			return m, 0, BadRequest("method must be a string")
		}
		m.Method = sm.Method
	}
	if e := m.check(f["jsonrpc"]); e != nil {
		return m, 0, e
	}
	return m.kind()
}

// check validates the members every message shares.
func (m *Message) check(version json.RawMessage) *Error {
	if string(version) != `"2.0"` {
		return BadRequest(`jsonrpc must be "2.0"`)
	}
	if m.ID != nil && !validID(m.ID) {
		m.ID = nil
		return BadRequest("id must be a string or an integer")
	}
	if string(m.Params) == "null" {
		m.Params, m.ParamFields = nil, nil
	}
	if len(m.Params) > 0 && m.Params[0] != '{' {
		return BadRequest("params must be an object")
	}
	return nil
}

func (m *Message) kind() (*Message, Kind, *Error) {
	switch {
	case m.Method != "" && m.Result == nil && m.Error == nil:
		if m.ID == nil {
			return m, KindNotification, nil
		}
		return m, KindRequest, nil
	case m.Method == "" && m.ID != nil && (m.Result != nil) != (m.Error != nil):
		return m, KindResponse, nil
	}
	return m, 0, BadRequest("not a request, notification or response")
}

// Wire builders. Every message is built by appending, so ids are echoed
// byte-for-byte and large results never pass through encoding/json.

// AppendResponsePrefix appends the start of a result response with id, up
// to and including `"result":`.
func AppendResponsePrefix(dst []byte, id json.RawMessage) []byte {
	dst = append(dst, responsePrefixHead...)
	dst = append(dst, id...)
	return append(dst, responsePrefixTail...)
}

// StringParam is params[name] decoded as a string: "" when absent or null,
// an encoding/json error when not a string. A plain one (PlainString) is
// taken without encoding/json and its allocations.
func StringParam(params map[string]json.RawMessage, name string) (string, error) {
	raw, ok := params[name]
	if !ok || string(raw) == "null" {
		return "", nil
	}
	if s, ok := PlainString(raw); ok {
		return s, nil
	}
	var s string
	err := json.Unmarshal(raw, &s)
	return s, err
}

// PlainString returns the JSON string raw decoded when it is quoted
// printable ASCII without escapes (what encoding/json would decode it to);
// false for anything else.
func PlainString(raw []byte) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return "", false
	}
	in := raw[1 : len(raw)-1]
	for _, c := range in {
		if c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			return "", false
		}
	}
	return string(in), true
}

// ResponsePrefix is AppendResponsePrefix(nil, id) in one allocation.
func ResponsePrefix(id json.RawMessage) []byte {
	return AppendResponsePrefix(make([]byte, 0, len(responsePrefixHead)+len(id)+len(responsePrefixTail)), id)
}

const (
	responsePrefixHead = `{"jsonrpc":"2.0","id":`
	responsePrefixTail = `,"result":`
)

// EnvelopeEnd closes a result response AppendResponsePrefix began.
var EnvelopeEnd = []byte{'}'}

// Envelope builds the result response with id around an encoded result.
func Envelope(id json.RawMessage, result []byte) []byte {
	b := AppendResponsePrefix(make([]byte, 0, len(result)+64), id)
	b = append(b, result...)
	return append(b, '}')
}

// EncodeError builds an error response; id may be nil (omitted, SPEC §1.1).
func EncodeError(id json.RawMessage, e *Error) []byte {
	b := []byte(`{"jsonrpc":"2.0",`)
	if id != nil {
		b = append(b, `"id":`...)
		b = append(b, id...)
		b = append(b, ',')
	}
	ej, err := json.Marshal(e)
	if err != nil {
		ej, _ = json.Marshal(NewError(CodeInternalError, "Internal error", nil))
	}
	b = append(b, `"error":`...)
	b = append(b, ej...)
	return append(b, '}')
}

// EncodeNotification builds a notification; params nil is omitted. It
// panics when params do not marshal (a programming error).
func EncodeNotification(method string, params any) []byte {
	v := map[string]any{"jsonrpc": "2.0", "method": method}
	if params != nil {
		v["params"] = params
	}
	b, err := json.Marshal(v)
	if err != nil {
		panic("bug: notification params do not marshal: " + err.Error())
	}
	return b
}

// EncodeRequest builds a server-to-client request; params nil is omitted.
// It panics when params do not marshal (a programming error).
func EncodeRequest(id int64, method string, params any) []byte {
	v := map[string]any{"jsonrpc": "2.0", "id": id, "method": method}
	if params != nil {
		v["params"] = params
	}
	b, err := json.Marshal(v)
	if err != nil {
		panic("bug: request params do not marshal: " + err.Error())
	}
	return b
}

// EncodeObject encodes the object o with member name set to value, JSON
// encoded already (a large member encoded once and reused), its keys in
// json.Marshal's sorted order.
func EncodeObject(o map[string]any, name string, value []byte) ([]byte, error) {
	keys := append(slices.Sorted(maps.Keys(o)), name)
	slices.Sort(keys)
	out := append(make([]byte, 0, len(value)+256), '{')
	for i, k := range keys {
		if i > 0 {
			out = append(out, ',')
		}
		out = strconv.AppendQuote(out, k) // keys are plain ASCII names
		out = append(out, ':')
		if k == name {
			out = append(out, value...)
			continue
		}
		v, err := json.Marshal(o[k])
		if err != nil {
			return nil, err
		}
		out = append(out, v...)
	}
	return append(out, '}'), nil
}

// MissingCapability is the 2026-07-28 -32021 error for the client
// capabilities a request needs.
func MissingCapability(names ...string) *Error {
	req := map[string]any{}
	for _, n := range names {
		req[n] = map[string]any{}
	}
	return NewError(CodeMissingCapability, "Missing required client capability: "+strings.Join(names, ", "),
		map[string]any{"requiredCapabilities": req}).WithStatus(http.StatusBadRequest)
}

// MissingExtension is the -32021 error for an extension a request needs.
func MissingExtension(id string) *Error {
	return NewError(CodeMissingCapability, "Missing required client capability: extension "+id,
		map[string]any{"requiredCapabilities": map[string]any{"extensions": map[string]any{id: map[string]any{}}}}).WithStatus(http.StatusBadRequest)
}

// ReadError is the error answer to a message the scanner could not read
// (err from scan.Read, other than *scan.AbortError): the id when the
// scanner learnt it, and whether the rest of the body is unread, so the
// connection must close.
func ReadError(err error) (id json.RawMessage, e *Error, unread bool) {
	var bad *scan.BadJSONError
	var member *scan.MemberError
	switch {
	case errors.As(err, &member):
		e := BadRequest(member.Problem()) // the message, the id or the method
		if strings.HasPrefix(member.Path, "/params/") {
			e = NewError(CodeInvalidParams, "Invalid params: "+member.Problem(), map[string]any{"path": member.Path}).WithStatus(http.StatusBadRequest)
		}
		return member.ID, e, member.Unread
	case errors.Is(err, scan.ErrTooLarge):
		return nil, NewError(CodeInvalidRequest, "Request body too large", nil).WithStatus(http.StatusRequestEntityTooLarge), false
	case errors.Is(err, scan.ErrTooDeep):
		// The rest of the body is unread: the transport reads or closes it.
		return nil, NewError(CodeInvalidRequest, "Invalid Request: JSON nested deeper than 64 levels", nil).WithStatus(http.StatusBadRequest), false
	case errors.As(err, &bad):
		return nil, NewError(CodeParseError, "Parse error: invalid JSON", nil).WithStatus(http.StatusBadRequest), false
	}
	return nil, NewError(CodeParseError, "Parse error: reading body failed", nil).WithStatus(http.StatusBadRequest), false
}
