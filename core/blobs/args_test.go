package blobs

// Bad tool arguments get the clear, documented error of the protocol (an
// isError result naming the argument, or -32602/-32600 for a message that
// is malformed as JSON-RPC), in both eras, and never an internal error, a
// parse error or a server bug log. Bodies go out exactly as written (raw
// bodies as they are, tool arguments as given), so key order and repeated
// members are the test's.

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/mcpblob/mcpblob/core/mcp"
	"github.com/mcpblob/mcpblob/core/mcp/mcptest"
)

// argsClient is a client of one era, declaring form elicitation.
type argsClient struct {
	*toolClient
	modern bool
}

func (a argsClient) era() string { return a.Version }

// argsClients returns a 2025-11-25 client (with a session) and a
// 2026-07-28 one, both declaring form elicitation.
func argsClients(t *testing.T, s *toolServer) []argsClient {
	return []argsClient{{s.client(t, legacyVersion, argsCaps), false}, {s.client(t, modernVersion, argsCaps), true}}
}

const argsCaps = `{"elicitation":{}}`

// argsRPC is the JSON-RPC response of a POST, reduced to what the tests
// compare.
type argsRPC struct {
	status int
	ID     json.RawMessage `json:"id"`
	Result *struct {
		IsError bool `json:"isError"`
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
		StructuredContent json.RawMessage `json:"structuredContent"`
	} `json:"result"`
	Error *struct {
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	} `json:"error"`
}

// argsOf reduces r; the test fails if r carries no JSON-RPC response.
func argsOf(t testing.TB, r *mcptest.Response) argsRPC {
	t.Helper()
	a := argsRPC{status: r.Status, ID: r.ID}
	if r.Result != nil {
		_ = json.Unmarshal(r.Result, &a.Result)
	}
	if r.Error != nil {
		_ = json.Unmarshal(r.Error, &a.Error)
	}
	if a.Result == nil && a.Error == nil {
		t.Fatalf("no JSON-RPC response: %d %.300s", r.Status, r.Body)
	}
	return a
}

// text is the first text block of a tool result.
func (r argsRPC) text() string {
	if r.Result == nil || len(r.Result.Content) == 0 {
		return ""
	}
	return r.Result.Content[0].Text
}

func (r argsRPC) String() string {
	b, _ := json.Marshal(struct {
		Status int
		Result any
		Error  any
	}{r.status, r.Result, r.Error})
	return string(b)
}

// post sends body (a whole JSON-RPC message, exactly as written) with the
// era's headers and hdr.
func (a argsClient) post(body string, hdr map[string]string) argsRPC {
	a.t.Helper()
	return argsOf(a.t, a.with(hdr).raw(body))
}

// metaMember is the 2026-07-28 params._meta member (with its comma), or "".
func (a argsClient) metaMember() string {
	if !a.modern {
		return ""
	}
	return `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":` + argsCaps + `},`
}

// tool calls tool with args, the raw arguments object; key, when set, is
// the Mcp-Param-Blob-Key header of 2026-07-28.
func (a argsClient) tool(name, args, key string) argsRPC {
	a.t.Helper()
	c := a.toolClient
	if a.modern && key != "" {
		c = c.with(map[string]string{"Mcp-Param-Blob-Key": key})
	}
	return argsOf(a.t, c.callTool(name, args))
}

// wantToolError checks for an isError result whose text has every one of
// parts, and none of the internals a client must not see.
func wantToolError(t *testing.T, what string, r argsRPC, parts ...string) {
	t.Helper()
	if r.Error != nil || r.Result == nil || !r.Result.IsError {
		t.Errorf("%s: %v, want an isError result", what, r)
		return
	}
	for _, p := range parts {
		if !strings.Contains(r.text(), p) {
			t.Errorf("%s: %q does not say %q", what, r.text(), p)
		}
	}
	for _, bad := range []string{"statat", "/tmp/", "name too long", "localfs:", "ingest:", "storage:"} {
		if strings.Contains(r.text(), bad) {
			t.Errorf("%s: %q shows internals (%q)", what, r.text(), bad)
		}
	}
}

// wantRPCError checks for a JSON-RPC error with code, HTTP status and a
// message that has every one of parts.
func wantRPCError(t *testing.T, what string, r argsRPC, code, status int, parts ...string) {
	t.Helper()
	if r.Error == nil || r.Error.Code != code || r.status != status {
		t.Errorf("%s: %v, want error %d with HTTP %d", what, r, code, status)
		return
	}
	for _, p := range parts {
		if !strings.Contains(r.Error.Message, p) {
			t.Errorf("%s: %q does not say %q", what, r.Error.Message, p)
		}
	}
}

const helloURI = `"data:text/plain;base64,aGVsbG8="`

// argsServer is the App on a fresh store of backend tb, with the
// defaults of both the protocol server and the App.
func argsServer(t *testing.T, tb testBackend) *toolServer {
	return newToolServer(t, tb.new(t), mcp.Options{}, Options{})
}

// TestArgsUploadFileKey: upload_file with a key that breaks the key rules
// (a 300-byte segment) or conflicts with another blob's path ("a/b" when
// "a" exists, "x" when "x/y" exists) answers an isError result naming the
// argument "key" and the reason, whether the key comes before the data URI
// (decoded straight into storage through the tool's FileSink) or after it,
// in both eras and on both backends. bd4921f answered -32700 Parse error.
func TestArgsUploadFileKey(t *testing.T) {
	t.Parallel()
	for _, tb := range testBackends() {
		t.Run(tb.name, func(t *testing.T) {
			t.Parallel()
			s := argsServer(t, tb)
			putBlob(t, s.be, "a", "text/plain", []byte("a"))
			putBlob(t, s.be, "x/y", "text/plain", []byte("y"))
			long := strings.Repeat("k", 300)
			cases := []struct {
				key   string
				parts []string
			}{
				{long, []string{`"key"`, "segment longer than 255 bytes"}},
				{"a/b", []string{`"key"`, `"a"`, "conflict"}},
				{"x", []string{`"key"`, `"x/"`, "conflict"}},
			}
			for _, a := range argsClients(t, s) {
				for _, tc := range cases {
					for _, order := range []string{"key first", "key last"} {
						args := `{"key":` + jsonString(tc.key) + `,"file":` + helloURI + `}`
						if order == "key last" {
							args = `{"file":` + helloURI + `,"key":` + jsonString(tc.key) + `}`
						}
						what := fmt.Sprintf("%s %s, key %.12q", a.era(), order, tc.key)
						wantToolError(t, what, a.tool("upload_file", args, tc.key), tc.parts...)
						if stored(t, s.be, tc.key) {
							t.Errorf("%s: the blob was stored", what)
						}
					}
				}
			}
			if stored(t, s.be, "x") {
				t.Error("x was stored")
			}
			s.noBugLogs(t)
		})
	}
}

// TestArgsRepeatedMembers: a member given twice in the arguments (or in
// params, or the message) is refused with -32602 (-32600 at the top level)
// naming it, in both eras: no "last one wins" that a proxy reading the first
// one would disagree with, and never an internal error. bd4921f answered a
// key given before and after the data URI with -32603 and logged "bug:
// direct upload under another key".
func TestArgsRepeatedMembers(t *testing.T) {
	t.Parallel()
	s := argsServer(t, testBackends()[0])
	for _, a := range argsClients(t, s) {
		for _, key := range []string{"d1", "d2"} {
			r := a.tool("upload_file", `{"key":"d1","file":`+helloURI+`,"key":"d2"}`, key)
			if a.modern && key == "d1" && r.Error != nil && r.Error.Code == -32020 {
				continue // the header is checked against the last value: also a refusal
			}
			wantRPCError(t, a.era()+" upload_file key twice, header "+key, r, -32602, 400, `"key"`, "more than once")
		}
		wantRPCError(t, a.era()+" list_blobs prefix twice", a.tool("list_blobs", `{"prefix":"a","prefix":"b"}`, ""),
			-32602, 400, `"prefix"`, "more than once")
		wantRPCError(t, a.era()+" name twice", a.post(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{`+a.metaMember()+
			`"name":"list_blobs","name":"stat_blob","arguments":{}}}`, map[string]string{"Mcp-Method": "tools/call", "Mcp-Name": "stat_blob"}),
			-32602, 400, `"name"`)
		wantRPCError(t, a.era()+" method twice", a.post(`{"jsonrpc":"2.0","id":7,"method":"ping","method":"tools/list","params":{`+
			strings.TrimSuffix(a.metaMember(), ",")+`}}`, map[string]string{"Mcp-Method": "tools/list"}), -32600, 400, `"method"`)
	}
	for _, key := range []string{"d1", "d2"} {
		if stored(t, s.be, key) {
			t.Errorf("%s was stored", key)
		}
	}
	s.noBugLogs(t)
}

// TestArgsLongStrings: a string over 64 KiB is never silently replaced by
// "": a tool argument that must be short is refused with an isError result
// naming it (bd4921f listed everything for a 70 KB list_blobs prefix), and
// an id, a method or a params member the protocol reads is refused with
// -32600/-32602.
func TestArgsLongStrings(t *testing.T) {
	t.Parallel()
	s := argsServer(t, testBackends()[0])
	putBlob(t, s.be, "a/one", "text/plain", []byte("1"))
	long := strings.Repeat("z", 70_000)
	for _, a := range argsClients(t, s) {
		r := a.tool("list_blobs", `{"prefix":"`+long+`"}`, "")
		wantToolError(t, a.era()+" list_blobs 70 KB prefix", r, `"prefix"`, "at most 1024 characters")
		if r.Result != nil && strings.Contains(string(r.Result.StructuredContent), "a/one") {
			t.Errorf("%s: a 70 KB prefix listed a/one", a.era())
		}
		r = a.tool("stat_blob", `{"key":"`+long+`"}`, long[:100])
		if a.modern && r.Error != nil && r.Error.Code == -32020 {
			// No client can send the Mcp-Param-Blob-Key header of a 70 KB
			// key (an HTTP front's header limit): a header mismatch is the
			// answer.
		} else {
			wantToolError(t, a.era()+" stat_blob 70 KB key", r, `"key"`)
		}
		wantToolError(t, a.era()+" get_download_link 70 KB filename",
			a.tool("get_download_link", `{"key":"a/one","filename":"`+long+`"}`, "a/one"), `"filename"`)
		wantToolError(t, a.era()+" upload_file 70 KB filename",
			a.tool("upload_file", `{"filename":"`+long+`","file":`+helloURI+`}`, ""), `"filename"`)
		r = a.post(`{"jsonrpc":"2.0","id":"`+long+`","method":"tools/call","params":{`+a.metaMember()+`"name":"list_blobs","arguments":{}}}`,
			map[string]string{"Mcp-Method": "tools/call", "Mcp-Name": "list_blobs"})
		wantRPCError(t, a.era()+" 70 KB id", r, -32600, 400, "id", "65536")
		if r.ID != nil {
			t.Errorf("%s: a 70 KB id was echoed as %.40s", a.era(), r.ID)
		}
		wantRPCError(t, a.era()+" 70 KB progress token", a.post(`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"_meta":{"progressToken":"`+long+
			`"},"name":"list_blobs","arguments":{}}}`, map[string]string{"Mcp-Method": "tools/call", "Mcp-Name": "list_blobs"}), -32602, 400, "progressToken")
	}
	s.noBugLogs(t)
}

// TestArgsUnknown: the blob tools' input schemas say additionalProperties
// false; an unknown argument is refused with an isError result naming it
// (SEP-1303: input validation errors are tool errors), in both eras, and
// nothing happens.
func TestArgsUnknown(t *testing.T) {
	t.Parallel()
	s := argsServer(t, testBackends()[0])
	putBlob(t, s.be, "k", "text/plain", []byte("k"))
	for _, a := range argsClients(t, s) {
		for _, tc := range []struct{ tool, args, key string }{
			{"list_blobs", `{"prefix":"","bogus":1}`, ""},
			{"stat_blob", `{"key":"k","bogus":true}`, "k"},
			{"delete_blob", `{"key":"k","bogus":null}`, "k"},
			{"get_download_link", `{"key":"k","ttl":60,"bogus":"x"}`, "k"},
			{"upload_file", `{"key":"u","file":` + helloURI + `,"bogus":"x"}`, "u"},
			{"request_upload", `{"bogus":"x"}`, ""},
		} {
			wantToolError(t, a.era()+" "+tc.tool, a.tool(tc.tool, tc.args, tc.key), `"bogus"`, "is not an argument of "+tc.tool)
		}
	}
	if !stored(t, s.be, "k") {
		t.Error("delete_blob with an unknown argument deleted k")
	}
	if stored(t, s.be, "u") {
		t.Error("upload_file with an unknown argument stored u")
	}
	s.noBugLogs(t)
}

// TestArgsNumbers: ttlSeconds, limit and maxSize out of range, of the wrong
// kind or too large for any integer type are refused naming the argument
// and the allowed range; bd4921f let 9300000000 or 1e18 overflow into the
// default or 0.3 s.
func TestArgsNumbers(t *testing.T) {
	t.Parallel()
	s := argsServer(t, testBackends()[0])
	putBlob(t, s.be, "k", "text/plain", []byte("k"))
	for _, a := range argsClients(t, s) {
		for _, v := range []string{"9300000000", "1e18", "1000000000000000000", "99999999999999999999", "0", "-5", "1.5", `"60"`} {
			wantToolError(t, a.era()+" ttlSeconds "+v, a.tool("get_download_link", `{"key":"k","ttlSeconds":`+v+`}`, "k"),
				`"ttlSeconds"`, "[1, 86400]")
			wantToolError(t, a.era()+" limit "+v, a.tool("list_blobs", `{"limit":`+v+`}`, ""), `"limit"`, "[1, 1000]")
		}
		r := a.tool("get_download_link", `{"key":"k","ttlSeconds":6e1}`, "k")
		if r.Result == nil || r.Result.IsError {
			t.Errorf("%s: ttlSeconds 6e1 (an integer) refused: %v", a.era(), r)
		}
	}
	s.noBugLogs(t)
}

// TestArgsFilenames: a filename with CR, LF, NUL or another control
// character, or over 255 bytes, is refused on the MCP tools that take one
// (get_download_link, upload_file in either key order), naming the argument;
// nothing is stored or minted.
func TestArgsFilenames(t *testing.T) {
	t.Parallel()
	s := argsServer(t, testBackends()[0])
	putBlob(t, s.be, "k", "text/plain", []byte("k"))
	for _, a := range argsClients(t, s) {
		for _, name := range []string{`a\r\nb.txt`, `nul\u0000.txt`, `c1\u0085`, strings.Repeat("f", 256), strings.Repeat("f", 60_000)} {
			wantToolError(t, a.era()+" get_download_link", a.tool("get_download_link", `{"key":"k","filename":"`+name+`"}`, "k"), `"filename"`)
			wantToolError(t, a.era()+" upload_file, filename first",
				a.tool("upload_file", `{"key":"f1","filename":"`+name+`","file":`+helloURI+`}`, "f1"), `"filename"`)
			wantToolError(t, a.era()+" upload_file, filename last",
				a.tool("upload_file", `{"key":"f2","file":`+helloURI+`,"filename":"`+name+`"}`, "f2"), `"filename"`)
		}
	}
	for _, key := range []string{"f1", "f2"} {
		if stored(t, s.be, key) {
			t.Errorf("%s was stored", key)
		}
	}
	s.noBugLogs(t)
}
