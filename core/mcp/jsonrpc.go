package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"

	"github.com/mcpblob/mcpblob/core/mcp/scan"
)

// JSON-RPC and MCP error codes (SPEC.md §10).
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
}

func (e *Error) Error() string { return fmt.Sprintf("mcp: jsonrpc error %d: %s", e.Code, e.Message) }

func newError(code int, msg string, data any) *Error {
	return &Error{Code: code, Message: msg, Data: data}
}

func (e *Error) withStatus(status int) *Error { c := *e; c.Status = status; return &c }

func invalidParams(format string, args ...any) *Error {
	return newError(CodeInvalidParams, fmt.Sprintf(format, args...), nil)
}

// httpStatus is the status a standalone error response carries.
func (e *Error) httpStatus() int {
	if e.Status != 0 {
		return e.Status
	}
	return http.StatusOK
}

// message is any JSON-RPC 2.0 message as scanned. ID keeps the sender's
// bytes so responses echo them exactly; nil means absent.
type message struct {
	ID     json.RawMessage
	Method string
	Params json.RawMessage
	Result json.RawMessage
	Error  json.RawMessage
	// params, meta and args are the members of params, params._meta and
	// params.arguments (scan.Message); files the strings taken out.
	params, meta, args map[string]json.RawMessage
	files              *scan.Files
}

type msgKind int

const (
	kindRequest msgKind = iota
	kindNotification
	kindResponse
)

func badRequest(why string) *Error {
	return newError(CodeInvalidRequest, "Invalid Request: "+why, nil).withStatus(http.StatusBadRequest)
}

// parseMessage reads one JSON-RPC message from what the scanner found,
// without decoding it again. Batches (arrays) are rejected: every supported
// protocol version since 2025-06-18 forbids them and mcpblob does not
// implement 2025-03-26 batching.
func parseMessage(sm *scan.Message) (*message, msgKind, *Error) {
	body := bytes.TrimSpace(sm.Raw)
	switch {
	case len(body) == 0:
		return nil, 0, newError(CodeParseError, "Parse error: empty body", nil).withStatus(http.StatusBadRequest)
	case body[0] != '{' && !json.Valid(body):
		// The scanner validated objects as they arrived; anything else
		// was held as it came.
		return nil, 0, newError(CodeParseError, "Parse error: invalid JSON", nil).withStatus(http.StatusBadRequest)
	case body[0] == '[':
		return nil, 0, badRequest("batch arrays are not supported")
	case body[0] != '{':
		return nil, 0, badRequest("not a JSON-RPC object")
	}
	f := sm.Fields
	m := &message{ID: f["id"], Params: f["params"], Result: f["result"], Error: f["error"],
		params: sm.Params, meta: sm.Meta, args: sm.Args, files: sm.Files}
	if raw, ok := f["method"]; ok {
		if len(raw) == 0 || raw[0] != '"' {
			return m, 0, badRequest("method must be a string")
		}
		m.Method = sm.Method
	}
	if e := m.check(f["jsonrpc"]); e != nil {
		return m, 0, e
	}
	return m.kind()
}

// check validates the members every message shares.
func (m *message) check(version json.RawMessage) *Error {
	if string(version) != `"2.0"` {
		return badRequest(`jsonrpc must be "2.0"`)
	}
	if m.ID != nil && !validID(m.ID) {
		m.ID = nil
		return badRequest("id must be a string or an integer")
	}
	if string(m.Params) == "null" {
		m.Params, m.params = nil, nil
	}
	if len(m.Params) > 0 && m.Params[0] != '{' {
		return badRequest("params must be an object")
	}
	return nil
}

func (m *message) kind() (*message, msgKind, *Error) {
	switch {
	case m.Method != "" && m.Result == nil && m.Error == nil:
		if m.ID == nil {
			return m, kindNotification, nil
		}
		return m, kindRequest, nil
	case m.Method == "" && m.ID != nil && (m.Result != nil) != (m.Error != nil):
		return m, kindResponse, nil
	}
	return m, 0, badRequest("not a request, notification or response")
}

func validID(id json.RawMessage) bool {
	if len(id) == 0 {
		return false
	}
	switch id[0] {
	case '"':
		return true
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		_, err := strconv.ParseInt(string(id), 10, 64)
		return err == nil
	}
	return false
}

// Wire builders. Every message is built by appending, so ids are echoed
// byte-for-byte and large results never pass through encoding/json.

func appendResponsePrefix(dst []byte, id json.RawMessage) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = append(dst, id...)
	return append(dst, `,"result":`...)
}

func envelope(id json.RawMessage, result []byte) []byte {
	b := appendResponsePrefix(make([]byte, 0, len(result)+64), id)
	b = append(b, result...)
	return append(b, '}')
}

// encodeError builds an error response; id may be nil (omitted, SPEC §1.1).
func encodeError(id json.RawMessage, e *Error) []byte {
	b := []byte(`{"jsonrpc":"2.0",`)
	if id != nil {
		b = append(b, `"id":`...)
		b = append(b, id...)
		b = append(b, ',')
	}
	ej, err := json.Marshal(e)
	if err != nil {
		ej, _ = json.Marshal(newError(CodeInternalError, "Internal error", nil))
	}
	b = append(b, `"error":`...)
	b = append(b, ej...)
	return append(b, '}')
}

func encodeNotification(method string, params any) []byte {
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

func encodeRequest(id int64, method string, params any) []byte {
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
