package headers

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcpblob/mcpblob/core/mcp/jsonrpc"
)

type object = map[string]any

// headerMap is a Getter over a map whose keys match case-insensitively.
type headerMap map[string]string

func (h headerMap) Get(name string) string {
	for k, v := range h {
		if strings.EqualFold(k, name) {
			return v
		}
	}
	return ""
}

func TestDecodeHeaderValue(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in, want string
		ok       bool
	}{
		{"plain", "plain", true},
		{"  padded\t", "padded", true},
		{"=?base64?SGVsbG8=?=", "Hello", true},
		{"=?base64?SGVsbG8?=", "", false},     // missing padding
		{"=?base64?SGVs!!!bG8=?=", "", false}, // bad alphabet
		{"=?base64?SGVsbG8=", "=?base64?SGVsbG8=", true},
		{"SGVsbG8=?=", "SGVsbG8=?=", true},
		{"=?base64?w7xuw68=?=", "ünï", true},
	} {
		got, ok := Decode(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("Decode(%q) = %q, %v; want %q, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

// rawArgs decodes an arguments object into the members the scanner
// locates.
func rawArgs(t *testing.T, s string) map[string]json.RawMessage {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestCheckParamHeaders(t *testing.T) {
	t.Parallel()
	hs := Params(object{"type": "object", "properties": object{
		"key":   object{"type": "string", "x-mcp-header": "Blob-Key"},
		"n":     object{"type": "integer", "x-mcp-header": "N"},
		"flag":  object{"type": "boolean", "x-mcp-header": "Flag"},
		"inner": object{"type": "object", "properties": object{"r": object{"type": "string", "x-mcp-header": "Region"}}},
	}})
	if len(hs) != 4 {
		t.Fatalf("collected %d headers", len(hs))
	}
	args := rawArgs(t, `{"key":"a b","n":42,"flag":true,"inner":{"r":"eu"}}`)
	good := headerMap{"Mcp-Param-Blob-Key": "a b", "mcp-param-n": "42.0", "Mcp-Param-Flag": "true", "Mcp-Param-Region": "=?base64?ZXU=?="}
	if e := CheckParams(good, hs, args); e != nil {
		t.Fatalf("good headers rejected: %v", e)
	}
	for name, h := range map[string]headerMap{
		"mismatch":   {"Mcp-Param-Blob-Key": "a c", "Mcp-Param-N": "42", "Mcp-Param-Flag": "true", "Mcp-Param-Region": "eu"},
		"missing":    {"Mcp-Param-N": "42", "Mcp-Param-Flag": "true", "Mcp-Param-Region": "eu"},
		"number":     {"Mcp-Param-Blob-Key": "a b", "Mcp-Param-N": "41", "Mcp-Param-Flag": "true", "Mcp-Param-Region": "eu"},
		"bool":       {"Mcp-Param-Blob-Key": "a b", "Mcp-Param-N": "42", "Mcp-Param-Flag": "True", "Mcp-Param-Region": "eu"},
		"nested":     {"Mcp-Param-Blob-Key": "a b", "Mcp-Param-N": "42", "Mcp-Param-Flag": "true", "Mcp-Param-Region": "us"},
		"bad base64": {"Mcp-Param-Blob-Key": "=?base64?YSBi?=x?=", "Mcp-Param-N": "42", "Mcp-Param-Flag": "true", "Mcp-Param-Region": "eu"},
	} {
		if e := CheckParams(h, hs, args); e == nil || e.Code != jsonrpc.CodeHeaderMismatch || e.Status != 400 {
			t.Errorf("%s: got %v, want -32020/400", name, e)
		}
	}
	// Null or absent values need no header, and must not have one.
	if e := CheckParams(headerMap{}, hs, rawArgs(t, `{"key":null}`)); e != nil {
		t.Errorf("null value: %v", e)
	}
	if e := CheckParams(headerMap{}, hs, nil); e != nil {
		t.Errorf("no arguments: %v", e)
	}
	if e := CheckParams(headerMap{"Mcp-Param-N": "1"}, hs, rawArgs(t, `{}`)); e == nil {
		t.Error("header without a body value accepted")
	}
	if e := CheckParams(headerMap{"Mcp-Param-Region": "eu"}, hs, rawArgs(t, `{"inner":{}}`)); e == nil {
		t.Error("nested header without a body value accepted")
	}
}

func TestParseAccept(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]Accept{
		"":                                       {JSON: true, SSE: true},
		"application/json":                       {JSON: true},
		"text/event-stream;q=0.5":                {SSE: true},
		"application/json, text/event-stream":    {JSON: true, SSE: true},
		" Application/JSON ; charset=utf-8":      {JSON: true},
		"*/*":                                    {JSON: true, SSE: true},
		"text/html":                              {},
		"application/*, text/*;q=0.1, image/png": {JSON: true, SSE: true},
	} {
		if got := ParseAccept(in); got != want {
			t.Errorf("ParseAccept(%q) = %+v, want %+v", in, got, want)
		}
	}
}

func TestCheckMethodAndName(t *testing.T) {
	t.Parallel()
	if e := CheckMethod(headerMap{"Mcp-Method": "tools/call"}, "tools/call"); e != nil {
		t.Errorf("matching Mcp-Method: %v", e)
	}
	for _, h := range []headerMap{{}, {"Mcp-Method": "tools/list"}, {"Mcp-Method": "=?base64?!?="}} {
		if e := CheckMethod(h, "tools/call"); e == nil || e.Code != jsonrpc.CodeHeaderMismatch {
			t.Errorf("Mcp-Method %v: %v", h, e)
		}
	}
	params := rawArgs(t, `{"name":"upload_file","uri":"blob:///a","taskId":"task-1"}`)
	for method, name := range map[string]string{"tools/call": "upload_file", "prompts/get": "upload_file",
		"resources/read": "blob:///a", "tasks/get": "task-1", "tasks/cancel": "task-1"} {
		if e := CheckNameParam(headerMap{"Mcp-Name": name}, method, params); e != nil {
			t.Errorf("%s with Mcp-Name %s: %v", method, name, e)
		}
		if e := CheckNameParam(headerMap{}, method, params); e == nil {
			t.Errorf("%s without Mcp-Name accepted", method)
		}
	}
	if e := CheckNameParam(headerMap{"Mcp-Name": "x"}, "tools/list", params); e != nil {
		t.Errorf("tools/list takes no Mcp-Name check: %v", e)
	}
	if e := CheckNameParam(headerMap{"Mcp-Name": "x"}, "tools/call", rawArgs(t, `{}`)); e == nil {
		t.Error("Mcp-Name without a body name accepted")
	}
}
