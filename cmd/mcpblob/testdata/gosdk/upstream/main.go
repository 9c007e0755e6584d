// Command upstream is an MCP server written with the official MCP Go SDK,
// served over Streamable HTTP: the go-sdk upstream of mcpblob's gateway
// tests (built by cmd/mcpblob's tests, like the interop client beside it).
//
// What it offers:
//
//	resources  gosdk://blob/big    -size bytes of the pattern below, application/octet-stream
//	           gosdk://blob/small  65537 bytes of the same pattern
//	           gosdk://text/hello  a short text/plain resource
//	tools      echo {text}          returns the text
//	           file_info {file}     file is an x-mcp-file data URI: returns {name, mediaType, size, sha256} as JSON text
//	           file_ref {file}      the same, file delivered by reference ("delivery":"reference"): through
//	                                mcpblob's gateway a link it fetches (checking its sha256), directly a data URI
//	           confirm {question}   asks the client (form elicitation; an input_required round on 2026-07-28,
//	                                an elicitation/create request on 2025-11-25) and returns the answer
//	           attach {question}    asks the client for a file the same way (a form whose field file is
//	                                x-mcp-file: maxSize 64 KiB, text/plain or text/csv) and returns
//	                                {name, mediaType, size, sha256} of the answer's file as JSON text
//	prompt     greet {name}         one user message "Hello, NAME"
//
// A blob of n bytes is byte(i) = f(i mod period), f(j) = (j*0x9E3779B1 mod
// 2^32) >> 13 mod 256, period = 3*65521: the same bytes as the TypeScript
// upstream (testdata/upstream-ts2/blob.mjs), which cmd/mcpblob's tests rebuild.
//
// usage: upstream -listen 127.0.0.1:PORT [-size BYTES]
// It prints "listening http://ADDR/mcp" once it accepts connections.
package main

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const (
	period    = 3 * 65521
	smallSize = 65537
)

func main() {
	listen := flag.String("listen", "127.0.0.1:0", "address to listen on")
	size := flag.Int("size", 256<<20, "size of gosdk://blob/big in bytes")
	flag.Parse()
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		fmt.Fprintln(os.Stderr, "gosdk upstream:", err)
		os.Exit(1)
	}
	srv := newServer(*size)
	getServer := func(*http.Request) *mcp.Server { return srv }
	sessions := mcp.NewStreamableHTTPHandler(getServer, nil)
	stateless := mcp.NewStreamableHTTPHandler(getServer, &mcp.StreamableHTTPOptions{Stateless: true})
	mux := http.NewServeMux()
	mux.Handle("/mcp", byEra(sessions, stateless))
	fmt.Printf("listening http://%s/mcp\n", ln.Addr())
	if err := http.Serve(ln, mux); err != nil {
		fmt.Fprintln(os.Stderr, "gosdk upstream:", err)
		os.Exit(1)
	}
}

// byEra serves 2026-07-28 requests (MCP-Protocol-Version 2026-07-28 or
// later) with the stateless handler, which the SDK needs for that era, and
// the rest with the sessionful one, which 2025-11-25 elicitation needs.
func byEra(sessions, stateless http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Mcp-Protocol-Version") >= "2026-07-28" {
			stateless.ServeHTTP(w, r)
			return
		}
		sessions.ServeHTTP(w, r)
	})
}

// onePeriod is the pattern's first period.
var onePeriod = func() []byte {
	b := make([]byte, period)
	for j := range b {
		b[j] = byte(uint32(j) * 0x9E3779B1 >> 13)
	}
	return b
}()

// blob returns the first n bytes of the pattern.
func blob(n int) []byte {
	b := make([]byte, n)
	for off := 0; off < n; off += period {
		copy(b[off:], onePeriod)
	}
	return b
}

func newServer(size int) *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "mcpblob-upstream-gosdk", Version: "1.0.0"}, nil)
	addBlob := func(name string, n int) {
		uri := "gosdk://blob/" + name
		srv.AddResource(&mcp.Resource{URI: uri, Name: name, MIMEType: "application/octet-stream", Size: int64(n)},
			func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
				return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{
					{URI: uri, MIMEType: "application/octet-stream", Blob: blob(n)}}}, nil
			})
	}
	addBlob("big", size)
	addBlob("small", smallSize)
	srv.AddResource(&mcp.Resource{URI: "gosdk://text/hello", Name: "hello", MIMEType: "text/plain"},
		func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{
				{URI: "gosdk://text/hello", MIMEType: "text/plain", Text: "hello from the gosdk upstream\n"}}}, nil
		})
	addTools(srv)
	srv.AddPrompt(&mcp.Prompt{Name: "greet", Description: "greets NAME",
		Arguments: []*mcp.PromptArgument{{Name: "name", Required: true}}},
		func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{
				{Role: "user", Content: &mcp.TextContent{Text: "Hello, " + req.Params.Arguments["name"]}}}}, nil
		})
	return srv
}

// objectSchema is the input schema of a tool whose arguments are all required.
func objectSchema(properties string) json.RawMessage {
	var props map[string]json.RawMessage
	if err := json.Unmarshal([]byte(properties), &props); err != nil {
		panic(err)
	}
	required := make([]string, 0, len(props))
	for name := range props {
		required = append(required, name)
	}
	b, _ := json.Marshal(map[string]any{"type": "object", "properties": props, "required": required})
	return b
}

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

func addTools(srv *mcp.Server) {
	srv.AddTool(&mcp.Tool{Name: "echo", Description: "returns its text", InputSchema: objectSchema(`{"text":{"type":"string"}}`)},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var args struct{ Text string }
			if err := json.Unmarshal(req.Params.Arguments, &args); err != nil {
				return nil, err
			}
			return text(args.Text), nil
		})
	srv.AddTool(&mcp.Tool{Name: "file_info", Description: "name, media type, size and sha256 of a file",
		InputSchema: objectSchema(`{"file":{"type":"string","format":"uri","x-mcp-file":{"maxSize":67108864,"accept":["*/*"]}}}`)},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var args struct{ File string }
			if err := json.Unmarshal(req.Params.Arguments, &args); err != nil {
				return nil, err
			}
			info, err := fileInfo(args.File)
			if err != nil {
				return nil, err
			}
			b, _ := json.Marshal(info)
			return text(string(b)), nil
		})
	srv.AddTool(&mcp.Tool{Name: "file_ref", Description: "name, media type, size and sha256 of a file, delivered by reference",
		InputSchema: objectSchema(`{"file":{"type":"string","format":"uri","x-mcp-file":{"maxSize":67108864,"accept":["*/*"],"delivery":"reference"}}}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var args struct{ File string }
			if err := json.Unmarshal(req.Params.Arguments, &args); err != nil {
				return nil, err
			}
			info, err := fileRefInfo(ctx, args.File)
			if err != nil {
				return nil, err
			}
			b, _ := json.Marshal(info)
			return text(string(b)), nil
		})
	srv.AddTool(&mcp.Tool{Name: "confirm", Description: "asks the user a yes/no question",
		InputSchema: objectSchema(`{"question":{"type":"string"}}`)}, confirm)
	srv.AddTool(&mcp.Tool{Name: "attach", Description: "asks the user for a file",
		InputSchema: objectSchema(`{"question":{"type":"string"}}`)}, attach)
}

// confirm asks for a form elicitation as an input request; the SDK sends it
// as an input_required round (2026-07-28) or an elicitation/create request
// (2025-11-25) and calls again with the answer.
func confirm(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	if r, ok := req.Params.InputResponses["confirm"].(*mcp.ElicitResult); ok {
		return text(fmt.Sprintf("action=%s ok=%v", r.Action, r.Content["ok"])), nil
	}
	var args struct{ Question string }
	if err := json.Unmarshal(req.Params.Arguments, &args); err != nil {
		return nil, err
	}
	schema := json.RawMessage(`{"type":"object","properties":{"ok":{"type":"boolean","title":"OK?"}},"required":["ok"]}`)
	return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{
		"confirm": &mcp.ElicitParams{Mode: "form", Message: args.Question, RequestedSchema: schema}}}, nil
}

// attachSchema is the form of attach: one x-mcp-file field.
var attachSchema = json.RawMessage(`{"type":"object","properties":{"file":{"type":"string","format":"uri","title":"File",` +
	`"x-mcp-file":{"maxSize":65536,"accept":["text/plain","text/csv"]}}},"required":["file"]}`)

// attach asks for a file as an input request, as confirm asks its question,
// and reports the file of the answer.
func attach(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	if r, ok := req.Params.InputResponses["attach"].(*mcp.ElicitResult); ok {
		if r.Action != "accept" {
			return text("action=" + r.Action), nil
		}
		file, _ := r.Content["file"].(string)
		info, err := fileInfo(file)
		if err != nil {
			return nil, err
		}
		b, _ := json.Marshal(info)
		return text(string(b)), nil
	}
	var args struct{ Question string }
	if err := json.Unmarshal(req.Params.Arguments, &args); err != nil {
		return nil, err
	}
	return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{
		"attach": &mcp.ElicitParams{Mode: "form", Message: args.Question, RequestedSchema: attachSchema}}}, nil
}

type info struct {
	Name      string `json:"name"`
	MediaType string `json:"mediaType"`
	Size      int    `json:"size"`
	SHA256    string `json:"sha256"`
}

// fileInfo reads an RFC 2397 data URI with an optional name parameter.
func fileInfo(uri string) (info, error) {
	head, data, ok := strings.Cut(strings.TrimPrefix(uri, "data:"), ",")
	if !ok || !strings.HasPrefix(uri, "data:") {
		return info{}, errors.New("file is not a data: URI")
	}
	params := strings.Split(head, ";")
	var raw []byte
	var err error
	if params[len(params)-1] == "base64" {
		params = params[:len(params)-1]
		raw, err = base64.StdEncoding.DecodeString(data)
	} else {
		var s string
		s, err = url.PathUnescape(data)
		raw = []byte(s)
	}
	if err != nil {
		return info{}, err
	}
	out := info{MediaType: params[0], Size: len(raw)}
	if out.MediaType == "" {
		out.MediaType = "text/plain"
	}
	for _, p := range params[1:] {
		if v, ok := strings.CutPrefix(p, "name="); ok {
			out.Name, _ = url.PathUnescape(v)
		}
	}
	sum := sha256.Sum256(raw)
	out.SHA256 = hex.EncodeToString(sum[:])
	return out, nil
}

// fileRefInfo reads a file delivered by reference: a link (from mcpblob's
// gateway), fetched as a stream and checked against the sha256 in its
// query; or a data URI (called directly).
func fileRefInfo(ctx context.Context, ref string) (info, error) {
	if strings.HasPrefix(ref, "data:") {
		return fileInfo(ref)
	}
	u, err := url.Parse(ref)
	if err != nil || u.Scheme != "http" || u.Hostname() != "127.0.0.1" { // the test gateway's links only
		return info{}, errors.New("file is neither a link of the gateway nor a data: URI")
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, ref, nil)
	if err != nil {
		return info{}, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return info{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return info{}, fmt.Errorf("GET the file: HTTP %d", resp.StatusCode)
	}
	h := sha256.New()
	n, err := io.Copy(h, resp.Body)
	if err != nil {
		return info{}, err
	}
	q := u.Query()
	sum := hex.EncodeToString(h.Sum(nil))
	if sum != q.Get("sha256") || sum != resp.Header.Get("x-mcp-sha256") {
		return info{}, errors.New("the file's sha256 does not match its link")
	}
	return info{Name: q.Get("name"), MediaType: q.Get("type"), Size: int(n), SHA256: sum}, nil
}
