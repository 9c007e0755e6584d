package mcp

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcpblob/mcpblob/core/mcp/headers"
	"github.com/mcpblob/mcpblob/core/mcp/scan"
	"github.com/mcpblob/mcpblob/core/mcp/session"
)

// uploadForm is an elicitation with an x-mcp-file field of maxSize 1000.
func uploadForm() InputRequest {
	return Elicit("Upload a file", Object{"type": "object", "properties": Object{
		"file": Object{"type": "string", "x-mcp-file": Object{"maxSize": 1000}}}})
}

// scanWith scans in through the server's router for a request from
// principal with headers h.
func scanWith(t *testing.T, s *Server, principal string, h HeaderMap, in string) *scan.Message {
	t.Helper()
	m, err := scan.Read(strings.NewReader(in), scan.Options{MaxBodyBytes: 1 << 20, MaxFileBytes: 1 << 20, SpoolDir: t.TempDir()},
		&router{s: s, r: &Request{Header: h, Principal: principal}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Files.Release)
	return m
}

// TestRouteRequestState: a 2026-07-28 retry whose requestState precedes its
// inputResponses has the form's maxSize applied while the answer arrives,
// for the principal the state was issued to only.
func TestRouteRequestState(t *testing.T) {
	t.Parallel()
	s := NewServer(testImpl, &Options{})
	c := &Call{srv: s, method: "tools/call", principal: "p", params: map[string]json.RawMessage{"name": json.RawMessage(`"request_upload"`)}}
	res, err := s.inputRequiredResult(c, map[string]InputRequest{"upload": uploadForm()})
	if err != nil {
		t.Fatal(err)
	}
	state, _ := res["requestState"].(string)
	if state == "" {
		t.Fatalf("no requestState for a form with a file field: %v", res)
	}
	in := `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"request_upload","requestState":"` + state +
		`","inputResponses":{"upload":{"action":"accept","content":{"file":"data:text/plain;base64,` +
		base64.StdEncoding.EncodeToString(bytes.Repeat([]byte("y"), 100<<10)) + `"}}}}}`
	for principal, want := range map[string]string{"p": "file is larger than maxSize 1000 bytes", "someone else": ""} {
		m := scanWith(t, s, principal, HeaderMap{}, in)
		if f := m.Files.Get("/params/inputResponses/upload/content/file"); f == nil || f.Problem != want {
			t.Errorf("%s: %+v, want problem %q", principal, f, want)
		}
	}
}

// TestRouteElicitationAnswer: a 2025-11-25 answer to a form elicitation in
// flight is bounded by its field's maxSize while it arrives, on the session
// that asked only.
func TestRouteElicitationAnswer(t *testing.T) {
	t.Parallel()
	s := NewServer(testImpl, &Options{})
	c := &Call{srv: s, sess: &session.State{ID: "sid"}}
	s.expectFiles(c, 9, fileFields(uploadForm()))
	in := `{"jsonrpc":"2.0","id":9,"result":{"action":"accept","content":{"file":"data:text/plain;base64,` +
		base64.StdEncoding.EncodeToString(bytes.Repeat([]byte("y"), 100<<10)) + `"}}}`
	for sid, want := range map[string]string{"sid": "file is larger than maxSize 1000 bytes", "other": ""} {
		m := scanWith(t, s, "", HeaderMap{headers.SessionID: sid}, in)
		if f := m.Files.Get("/result/content/file"); f == nil || f.Problem != want {
			t.Errorf("session %s: %+v, want problem %q", sid, f, want)
		}
	}
	s.forgetFiles(c)
	m := scanWith(t, s, "", HeaderMap{headers.SessionID: "sid"}, in)
	if f := m.Files.Get("/result/content/file"); f == nil || f.Problem != "" {
		t.Errorf("after forgetFiles: %+v", f)
	}
}
