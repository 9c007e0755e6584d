package mcp

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/mcpblob/mcpblob/core/mcp/scan"
)

// uriOpener serves one file URI, "mcp-file://h/ok", as text/plain "hello"
// to principal ""; any other is a FileError naming the argument.
func uriOpener(opened *int) FileURIOpener {
	return func(u FileURI) (*FileSource, error) {
		if u.URI != "mcp-file://h/ok" {
			return nil, &FileError{Arg: u.Argument, Reason: "no such file"}
		}
		*opened++
		return &FileSource{MediaType: "text/plain", Size: 5, Body: io.NopCloser(strings.NewReader("hello"))}, nil
	}
}

// addModesTool registers "read", whose file argument has the descriptor
// spec, and answers with what File.Reader gave.
func addModesTool(t *testing.T, s *Server, name, spec string) {
	t.Helper()
	schema := fmt.Sprintf(`{"type":"object","properties":{"file":{"type":"string","format":"uri","x-mcp-file":%s}},"required":["file"]}`, spec)
	err := AddTypedTool(s, &Tool{Name: name, InputSchema: json.RawMessage(schema)}, func(c *Call, in struct {
		File *File `json:"file"`
	}) (*ToolResult, error) {
		defer in.File.Abort()
		b, err := io.ReadAll(in.File.Reader())
		if err != nil {
			return nil, err
		}
		return &ToolResult{Content: []Content{Text{Text: fmt.Sprintf("%s %d %s", in.File.MediaType, in.File.Size, b)}}}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestFileURIArguments: an mcp-file URI reaches a handler through the same
// File as a data URI where transferModes allow "upload" and the server has
// an opener; elsewhere it is refused naming the argument, and so is a data
// URI where only "upload" is allowed (a long one too, decoded while it
// arrived). maxSize and accept hold for opened files.
func TestFileURIArguments(t *testing.T) {
	t.Parallel()
	eras(t, func(t *testing.T, newClient func(*testing.T, *Server) *testClient) {
		opened := 0
		s := NewServer(testImpl, &Options{SpoolDir: t.TempDir(), OpenFileURI: uriOpener(&opened)})
		addModesTool(t, s, "any", `{}`)
		addModesTool(t, s, "inline", `{"transferModes":["inline"]}`)
		addModesTool(t, s, "upload", `{"transferModes":["upload"]}`)
		addModesTool(t, s, "small", `{"maxSize":4}`)
		addModesTool(t, s, "images", `{"accept":["image/*"]}`)
		plain := NewServer(testImpl, &Options{SpoolDir: t.TempDir()})
		addModesTool(t, plain, "any", `{}`)
		c, cp := newClient(t, s), newClient(t, plain)
		for _, tc := range []struct {
			c         *testClient
			tool, arg string
			want      string
			isError   bool
		}{
			{c, "any", "mcp-file://h/ok", "text/plain 5 hello", false},
			{c, "upload", "MCP-FILE://h/ok", `Argument "file": no such file`, true},
			{c, "upload", "mcp-file://h/ok", "text/plain 5 hello", false},
			{c, "any", "data:text/plain,hi", "text/plain 2 hi", false},
			{c, "inline", "mcp-file://h/ok", `Argument "file": scheme "mcp-file" is not accepted here: a data: URI is required`, true},
			{c, "upload", "data:text/plain,hi", `Argument "file": ` + scan.InlineRefused, true},
			{c, "any", "mcp-file://h/other", `Argument "file": no such file`, true},
			{c, "small", "mcp-file://h/ok", `Argument "file": file is larger than maxSize 4 bytes`, true},
			{c, "images", "mcp-file://h/ok", `Argument "file": media type "text/plain" is not accepted (accept: image/*)`, true},
			{cp, "any", "mcp-file://h/ok", `Argument "file": scheme "mcp-file" is not accepted here: a data: URI is required`, true},
		} {
			args, _ := json.Marshal(map[string]string{"file": tc.arg})
			tr := tc.c.callTool(tc.tool, string(args)).tool(t)
			if tr.IsError != tc.isError || tr.text() != tc.want {
				t.Errorf("%s %s: isError %v, %q; want %v, %q", tc.tool, tc.arg, tr.IsError, tr.text(), tc.isError, tc.want)
			}
		}
		// "any", "upload", "small" and "images" opened it (the last two to
		// check it); "inline" and the server without an opener did not.
		if opened != 4 {
			t.Errorf("the opener opened %d files; want 4", opened)
		}
		// A data URI over 64 KiB is decoded while it arrives; "upload" only
		// still refuses it.
		long := "data:text/plain;base64," + strings.Repeat("aGVsbG8g", 20000)
		args, _ := json.Marshal(map[string]string{"file": long})
		if tr := c.callTool("upload", string(args)).tool(t); !tr.IsError || !strings.Contains(tr.text(), scan.InlineRefused) {
			t.Errorf("a long data URI where only upload is allowed: isError %v, %.80q", tr.IsError, tr.text())
		}
	})
}

// TestAddMethod: an application's method is served in both eras with its
// params; a method the server serves already cannot be replaced.
func TestAddMethod(t *testing.T) {
	t.Parallel()
	eras(t, func(t *testing.T, newClient func(*testing.T, *Server) *testClient) {
		s := NewServer(testImpl, &Options{})
		s.AddMethod("files/echo", func(c *Call) (any, error) {
			return Object{"got": c.Param("v")}, nil
		})
		func() {
			defer func() {
				if recover() == nil {
					t.Error("AddMethod replaced tools/call")
				}
			}()
			s.AddMethod("tools/call", func(*Call) (any, error) { return nil, nil })
		}()
		r := newClient(t, s).request("files/echo", "", `{"v":"x"}`)
		if r.Error != nil || !strings.Contains(string(r.Result), `"got":"x"`) {
			t.Fatalf("files/echo: %s %+v", r.Result, r.Error)
		}
	})
}
