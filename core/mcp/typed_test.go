package mcp

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
)

// noteArgs are the arguments of the typed test tool.
type noteArgs struct {
	Title string   `json:"title"`
	Count int64    `json:"count"`
	Tags  []string `json:"tags"`
	Pin   bool     `json:"pin"`
	File  *File    `json:"file"`
}

const noteSchema = `{"type":"object","properties":{
	"title":{"type":"string","minLength":1,"maxLength":10},
	"count":{"type":"integer","minimum":1,"maximum":100},
	"tags":{"type":"array","items":{"type":"string","maxLength":3}},
	"pin":{"type":"boolean"},
	"file":{"type":"string","x-mcp-file":{"maxSize":4194304,"accept":["text/plain"]}}},
	"required":["title"],"additionalProperties":false}`

// addNoteTool registers the typed tool "note", which describes what it
// was given.
func addNoteTool(t *testing.T, s *Server) {
	t.Helper()
	err := AddTypedTool(s, &Tool{Name: "note", InputSchema: json.RawMessage(noteSchema)},
		func(c *Call, in noteArgs) (*ToolResult, error) {
			desc := fmt.Sprintf("%s/%d/%s/%v", in.Title, in.Count, strings.Join(in.Tags, ","), in.Pin)
			if in.File != nil {
				h := sha256.New()
				n, err := io.Copy(h, in.File.Reader())
				if err != nil {
					return nil, err
				}
				desc += fmt.Sprintf("/%s %d %s", in.File.MediaType, n, hex.EncodeToString(h.Sum(nil)))
			}
			return &ToolResult{Content: []Content{Text{Text: desc}}}, nil
		})
	if err != nil {
		t.Fatal(err)
	}
}

// TestTypedTool: the arguments are checked against the schema (an isError
// result naming the argument), then decoded into the struct, integers in
// any notation.
func TestTypedTool(t *testing.T) {
	t.Parallel()
	eras(t, func(t *testing.T, newClient func(*testing.T, *Server) *testClient) {
		s := NewServer(testImpl, &Options{SpoolDir: t.TempDir()})
		addNoteTool(t, s)
		c := newClient(t, s)
		for _, tc := range []struct {
			args, want string
			isError    bool
		}{
			{`{"title":"a","count":6e1,"tags":["x","yz"],"pin":true}`, "a/60/x,yz/true", false},
			{`{"title":"a","count":null}`, "a/0//false", false},
			{`{"title":"a","file":"data:text/plain;base64,aGk="}`,
				"a/0//false/text/plain 2 " + sha256Hex([]byte("hi")), false},
			{`{}`, `Argument "title" is required`, true},
			{`{"title":""}`, `Argument "title" must not be empty`, true},
			{`{"title":"a","count":0}`, `Argument "count" must be an integer in [1, 100]`, true},
			{`{"title":"a","count":1.5}`, `Argument "count" must be an integer in [1, 100]`, true},
			{`{"title":"a","tags":["long"]}`, `Argument "tags[0]" must be at most 3 characters long`, true},
			{`{"title":"a","pin":"yes"}`, `Argument "pin" must be a boolean`, true},
			{`{"title":"a","other":1}`, `Argument "other" is not an argument of note (it takes count, file, pin, tags, title)`, true},
			{`{"title":"a","file":"data:image/png;base64,AAAA"}`,
				`Argument "file": media type "image/png" is not accepted (accept: text/plain)`, true},
		} {
			tr := c.callTool("note", tc.args).tool(t)
			if tr.IsError != tc.isError || tr.text() != tc.want {
				t.Errorf("%s: isError %v, %q; want %v, %q", tc.args, tr.IsError, tr.text(), tc.isError, tc.want)
			}
		}
	})
}

// TestTypedToolFileStreamed: a *File field gets a 3 MiB data URI that was
// decoded while it arrived (to a spool), not a buffered string.
func TestTypedToolFileStreamed(t *testing.T) {
	t.Parallel()
	payload := randomBytes(7, 3<<20)
	s := NewServer(testImpl, &Options{SpoolDir: t.TempDir()})
	err := AddTypedTool(s, &Tool{Name: "hash"}, func(c *Call, in struct {
		File *File `json:"file"`
	}) (*ToolResult, error) {
		if in.File.f.Raw() || in.File.f.Sink() != nil || !in.File.f.Diverted() {
			return ToolError("the file was not spooled while it arrived"), nil
		}
		h := sha256.New()
		if _, err := io.Copy(h, in.File.Reader()); err != nil {
			return nil, err
		}
		return &ToolResult{Content: []Content{Text{Text: hex.EncodeToString(h.Sum(nil))}}}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	tr := newModernClient(t, s).streamCall("hash", "text/plain", payload).tool(t)
	if tr.IsError || tr.text() != sha256Hex(payload) {
		t.Fatalf("isError %v, %q; want %s", tr.IsError, tr.text(), sha256Hex(payload))
	}
}

// TestCallFileError: Call.File's refusal is a *FileError with the argument,
// the reason and the limit; returned as it is, it is the isError result
// naming the argument.
func TestCallFileError(t *testing.T) {
	t.Parallel()
	s := NewServer(testImpl, &Options{SpoolDir: t.TempDir()})
	var got *FileError
	s.AddTool(&Tool{Name: "f", InputSchema: json.RawMessage(`{"type":"object","properties":{"file":{"type":"string","x-mcp-file":{"maxSize":1000}}}}`),
		Handler: func(c *Call) (*ToolResult, error) {
			_, err := c.File("file")
			if !errors.As(err, &got) {
				return ToolError("no FileError: %v", err), nil
			}
			return nil, fmt.Errorf("wrapped: %w", err)
		}})
	c := newLegacyClient(t, s)
	tr := c.streamCall("f", "text/plain", randomBytes(8, 100<<10)).tool(t)
	want := `Argument "file": file is larger than maxSize 1000 bytes`
	if !tr.IsError || tr.text() != want || got.Arg != "file" || got.Limit != 1000 || got.Reason != "file is larger than maxSize 1000 bytes" {
		t.Fatalf("isError %v, %q; FileError %+v", tr.IsError, tr.text(), got)
	}
	tr = c.callTool("f", `{}`).tool(t)
	if !tr.IsError || tr.text() != `Argument "file" is required` || got.Limit != 0 {
		t.Fatalf("absent: isError %v, %q; FileError %+v", tr.IsError, tr.text(), got)
	}
}

// TestDerivedSchema: without an InputSchema, AddTypedTool derives one from
// the struct: json names, omitempty for optional, x-mcp-file for *File.
func TestDerivedSchema(t *testing.T) {
	type in struct {
		Key   string   `json:"key" description:"the key"`
		Limit int      `json:"limit,omitempty"`
		Rate  float64  `json:"rate,omitempty"`
		Tags  []string `json:"tags,omitempty"`
		Doc   *File    `json:"doc"`
		Skip  string   `json:"-"`
	}
	s := NewServer(testImpl, nil)
	if err := AddTypedTool(s, &Tool{Name: "d"}, func(*Call, in) (*ToolResult, error) { return &ToolResult{}, nil }); err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(s.toolMap["d"].def["inputSchema"])
	want := `{"additionalProperties":false,"properties":{"doc":{"format":"uri","type":"string","x-mcp-file":{}},` +
		`"key":{"description":"the key","type":"string"},"limit":{"type":"integer"},"rate":{"type":"number"},` +
		`"tags":{"items":{"type":"string"},"type":"array"}},"required":["key","doc"],"type":"object"}`
	if string(got) != want {
		t.Fatalf("schema\n%s\nwant\n%s", got, want)
	}
	if s.toolMap["d"].files["doc"].MaxSize != 0 {
		t.Fatalf("doc descriptor %+v", s.toolMap["d"].files["doc"])
	}
	err := AddTypedTool(s, &Tool{Name: "n"}, func(*Call, int) (*ToolResult, error) { return nil, nil })
	if err == nil || !strings.Contains(err.Error(), "struct") {
		t.Fatalf("non-struct In: %v", err)
	}
}

// TestContentWire: typed blocks encode exactly as the maps they replace.
func TestContentWire(t *testing.T) {
	r := Resource{URI: "blob:///a", Name: "a", MIMEType: "text/plain", Size: 3, Streamable: true}
	for _, tc := range []struct {
		block Content
		old   Object
	}{
		{Text{Text: "hi <&>"}, Object{"type": "text", "text": "hi <&>"}},
		{Image{Data: []byte{1, 2, 3}, MIMEType: "image/png"}, Object{"type": "image", "data": "AQID", "mimeType": "image/png"}},
		{Audio{Data: []byte("RIFF"), MIMEType: "audio/wav"}, Object{"type": "audio", "data": "UklGRg==", "mimeType": "audio/wav"}},
		{ResourceLink{r}, Object{"type": "resource_link", "uri": "blob:///a", "name": "a", "mimeType": "text/plain", "size": 3, "streamable": true}},
		{EmbeddedResource{URI: "test://x", MIMEType: "text/plain", Text: "t"},
			Object{"type": "resource", "resource": Object{"uri": "test://x", "mimeType": "text/plain", "text": "t"}}},
		{EmbeddedResource{URI: "test://y", Blob: []byte{0}}, Object{"type": "resource", "resource": Object{"uri": "test://y", "blob": "AA=="}}},
	} {
		got, err := json.Marshal(tc.block)
		want, _ := json.Marshal(tc.old)
		if err != nil || string(got) != string(want) {
			t.Errorf("%T: %s, %v; want %s", tc.block, got, err, want)
		}
	}
}
