package mcp

import (
	"encoding/json"
	"testing"
)

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
		got, ok := decodeHeaderValue(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("decodeHeaderValue(%q) = %q, %v; want %q, %v", tc.in, got, ok, tc.want, tc.ok)
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
	var hs []paramHeader
	collectParamHeaders(Object{"type": "object", "properties": Object{
		"key":   Object{"type": "string", "x-mcp-header": "Blob-Key"},
		"n":     Object{"type": "integer", "x-mcp-header": "N"},
		"flag":  Object{"type": "boolean", "x-mcp-header": "Flag"},
		"inner": Object{"type": "object", "properties": Object{"r": Object{"type": "string", "x-mcp-header": "Region"}}},
	}}, nil, &hs)
	if len(hs) != 4 {
		t.Fatalf("collected %d headers", len(hs))
	}
	args := rawArgs(t, `{"key":"a b","n":42,"flag":true,"inner":{"r":"eu"}}`)
	good := HeaderMap{"Mcp-Param-Blob-Key": "a b", "mcp-param-n": "42.0", "Mcp-Param-Flag": "true", "Mcp-Param-Region": "=?base64?ZXU=?="}
	if e := checkParamHeaders(good, hs, args); e != nil {
		t.Fatalf("good headers rejected: %v", e)
	}
	for name, h := range map[string]HeaderMap{
		"mismatch":   {"Mcp-Param-Blob-Key": "a c", "Mcp-Param-N": "42", "Mcp-Param-Flag": "true", "Mcp-Param-Region": "eu"},
		"missing":    {"Mcp-Param-N": "42", "Mcp-Param-Flag": "true", "Mcp-Param-Region": "eu"},
		"number":     {"Mcp-Param-Blob-Key": "a b", "Mcp-Param-N": "41", "Mcp-Param-Flag": "true", "Mcp-Param-Region": "eu"},
		"bool":       {"Mcp-Param-Blob-Key": "a b", "Mcp-Param-N": "42", "Mcp-Param-Flag": "True", "Mcp-Param-Region": "eu"},
		"nested":     {"Mcp-Param-Blob-Key": "a b", "Mcp-Param-N": "42", "Mcp-Param-Flag": "true", "Mcp-Param-Region": "us"},
		"bad base64": {"Mcp-Param-Blob-Key": "=?base64?YSBi?=x?=", "Mcp-Param-N": "42", "Mcp-Param-Flag": "true", "Mcp-Param-Region": "eu"},
	} {
		if e := checkParamHeaders(h, hs, args); e == nil || e.Code != CodeHeaderMismatch || e.Status != 400 {
			t.Errorf("%s: got %v, want -32020/400", name, e)
		}
	}
	// Null or absent values need no header, and must not have one.
	if e := checkParamHeaders(HeaderMap{}, hs, rawArgs(t, `{"key":null}`)); e != nil {
		t.Errorf("null value: %v", e)
	}
	if e := checkParamHeaders(HeaderMap{}, hs, nil); e != nil {
		t.Errorf("no arguments: %v", e)
	}
	if e := checkParamHeaders(HeaderMap{"Mcp-Param-N": "1"}, hs, rawArgs(t, `{}`)); e == nil {
		t.Error("header without a body value accepted")
	}
	if e := checkParamHeaders(HeaderMap{"Mcp-Param-Region": "eu"}, hs, rawArgs(t, `{"inner":{}}`)); e == nil {
		t.Error("nested header without a body value accepted")
	}
}
