package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/mcpblob/mcpblob/core/mcp/headers"
	"github.com/mcpblob/mcpblob/core/mcp/resstream"
	"github.com/mcpblob/mcpblob/core/mcp/scan"
	"github.com/mcpblob/mcpblob/core/mcp/toolargs"
)

// Object is a small JSON object built by handlers. encoding/json writes its
// keys sorted, which keeps answers stable.
type Object = map[string]any

// FileSpec is an x-mcp-file descriptor: the accepted media types (type/*
// wildcards allowed), the largest file in bytes (0: the server's
// MaxFileBytes) and SEP-2631's transferModes (none: both).
type FileSpec struct {
	Accept        []string `json:"accept,omitempty"`
	MaxSize       int64    `json:"maxSize,omitempty"`
	TransferModes []string `json:"transferModes,omitempty"`
}

// Sink takes a file input's bytes as they are decoded (see [Tool].FileSink).
// Abort discards what was written; the server calls it when the value is
// rejected or the call ends without [File.Keep].
type Sink interface {
	io.Writer
	Abort()
}

// FileTarget describes a file input about to arrive, for a [Tool].FileSink.
type FileTarget struct {
	// Ctx lives as long as the server; a sink must not depend on the
	// request's context, which ends before the handler runs.
	Ctx context.Context
	// Argument is the argument's name; MediaType the data URI's declared
	// media type (with the charset of text); Spec its descriptor.
	Argument  string
	MediaType string
	Spec      FileSpec
	// Args are the small string arguments that came before it in the
	// message (a key, a filename…); later ones are not known yet.
	Args map[string]string
	// Principal is the authenticated caller, Scopes its credential's scopes.
	Principal string
	Scopes    []string
}

// FileSink chooses where a file input's bytes go before they arrive: it
// returns a Sink (a storage upload, say), or (nil, false) to let them be
// spooled and read by the handler from File.Reader. The handler finds the
// sink again with File.Sink(); the server aborts it when the value is
// rejected or the handler did not call File.Keep. A *[FileError] refuses
// the value before its first byte, naming the argument at fault: the value
// is read and dropped, and File returns that error to the handler.
type FileSink func(t FileTarget) (Sink, bool, error)

// Tool is one tool a [Server] offers. Register it with [Server.AddTool].
type Tool struct {
	Name        string
	Title       string
	Description string
	// InputSchema is the JSON Schema of the arguments object. Properties
	// carrying "x-mcp-file" are file inputs (their descriptor is read from
	// the schema); properties carrying "x-mcp-header" are mirrored in
	// Mcp-Param-* headers in 2026-07-28 and checked against the body.
	InputSchema json.RawMessage
	// OutputSchema, when set, describes StructuredContent.
	OutputSchema json.RawMessage
	// Annotations are the tool's hints (readOnlyHint, destructiveHint…).
	Annotations json.RawMessage
	// Handler serves tools/call.
	Handler ToolHandler
	// FileSink, when set, may take a file input's bytes straight away.
	FileSink FileSink
	// Streams says when the answer goes over SSE (when the client accepts
	// it) rather than as one JSON body: see [Streaming]. A call with a
	// progressToken streams whatever it says.
	Streams Streaming
	// Stateful: the tool's input rounds (2026-07-28) carry its progress in
	// a signed requestState, and input responses that come without one
	// are ignored.
	Stateful bool
	// Requires lists client capabilities the tool needs: a 2026-07-28
	// client without them gets -32021 before any work.
	Requires []string
	// TaskSupport says whether the handler may run as a task (the tasks
	// extension, 2026-07-28): any value but TaskForbidden makes the server
	// offer the extension and lets the handler answer with
	// [Call.RunAsTask]; TaskRequired refuses clients that did not
	// negotiate it.
	TaskSupport TaskSupport
}

// Streaming is when a tool's calls answer over SSE, by what the handler
// sends while it runs.
type Streaming int

// The values of [Tool].Streams.
const (
	// StreamNever: one JSON body (the handler sends nothing while it runs).
	StreamNever Streaming = iota
	// StreamForInput: the handler asks the client for input ([Call.Input])
	// and sends no notifications. Its 2025-11-25 calls stream, since the
	// requests travel on the call's stream; its 2026-07-28 calls do not,
	// since the answers come back by retried requests (MRTR).
	StreamForInput
	// StreamAlways: the handler sends notifications (logs, progress…)
	// while it runs, and may ask for input: every call streams.
	StreamAlways
)

// TaskSupport is a tool's use of the tasks extension.
type TaskSupport int

// The values of [Tool].TaskSupport.
const (
	TaskForbidden TaskSupport = iota // the handler never runs as a task
	TaskOptional                     // it may, when the client negotiated tasks
	TaskRequired                     // clients must negotiate tasks
)

// ToolHandler serves a tools/call. A returned error that is an *Error is
// sent as that JSON-RPC error, a *FileError (or *InputError) as an isError
// result; any other error is an internal error (logged, not sent). A failed tool execution is a result with IsError (ToolError).
type ToolHandler func(c *Call) (*ToolResult, error)

// ToolResult is a CallToolResult.
type ToolResult struct {
	Content           []Content // Text{…}, Image{…}, ResourceLink{…}…
	StructuredContent any
	IsError           bool
	// special is a protocol answer in place of a CallToolResult (a
	// CreateTaskResult).
	special Object
}

func (r *ToolResult) object() Object {
	if r.special != nil {
		return r.special
	}
	o := Object{"content": r.Content}
	if r.Content == nil {
		o["content"] = []Content{}
	}
	if r.StructuredContent != nil {
		o["structuredContent"] = r.StructuredContent
	}
	if r.IsError {
		o["isError"] = true
	}
	return o
}

// ToolError is a tool execution error (SEP-1303): a result with isError and
// the message as text.
func ToolError(format string, a ...any) *ToolResult {
	return &ToolResult{Content: []Content{Text{Text: fmt.Sprintf(format, a...)}}, IsError: true}
}

// Resource describes one resource in resources/list.
type Resource struct {
	URI, Name, Title, Description, MIMEType string
	// Size in bytes; negative: unknown (omitted).
	Size int64
	// Annotations are sent as they are (lastModified, audience…).
	Annotations Object
	// Streamable marks resources better fetched by resources/stream (SEP-2532).
	Streamable bool
}

func (r Resource) object() Object {
	o := Object{"uri": r.URI, "name": r.Name}
	for k, v := range map[string]string{"title": r.Title, "description": r.Description, "mimeType": r.MIMEType} {
		if v != "" {
			o[k] = v
		}
	}
	if r.Size >= 0 {
		o["size"] = r.Size
	}
	if r.Annotations != nil {
		o["annotations"] = r.Annotations
	}
	if r.Streamable {
		o["streamable"] = true
	}
	return o
}

// ResourceTemplate describes a family of resources (RFC 6570 URI template)
// in resources/templates/list.
type ResourceTemplate struct {
	URITemplate, Name, Title, Description, MIMEType string
	Streamable                                      bool
}

func (t ResourceTemplate) object() any {
	// Fields in the sorted order of their keys, as an Object would be.
	return struct {
		Description string `json:"description,omitempty"`
		MIMEType    string `json:"mimeType,omitempty"`
		Name        string `json:"name"`
		Streamable  bool   `json:"streamable,omitempty"`
		Title       string `json:"title,omitempty"`
		URITemplate string `json:"uriTemplate"`
	}{t.Description, t.MIMEType, t.Name, t.Streamable, t.Title, t.URITemplate}
}

// Contents is a resource's contents, answered by resources/read. Small
// contents are Text or Blob; large ones are a Body of exactly Size bytes,
// written as base64 ("blob") with an exact Content-Length and flat memory,
// or, when BodyText is set, as text whose JSON-escaped length is TextLen
// (see [ScanText]). The server closes Body.
type Contents struct {
	URI, MIMEType string
	Text          string
	Blob          []byte // small binary contents (nil: Text is sent)
	Body          io.ReadCloser
	Size          int64
	BodyText      bool
	TextLen       int64
}

// ResourceHandler reads resources whose URIs it recognises: it answers
// ErrNoResource for any other URI, so the next handler is asked.
type ResourceHandler struct {
	// Read serves resources/read.
	Read func(c *Call, uri string) (*Contents, error)
	// List, when set, serves resources/list pages (cursor "" is the first).
	List func(c *Call, cursor string) (items []Resource, next string, err error)
	// Stream, when set, serves resources/stream (SEP-2532); resources it
	// reads but cannot stream answer "stream not supported".
	Stream func(c *Call, uri string, maxSize int64) (*resstream.Answer, error)
	// Complete, when set, completes an argument of the template.
	Complete CompleteFunc
}

// Completion is a completion/complete answer: at most 100 Values, the
// Total number of matches when known (< 0: unknown), and whether HasMore
// matches exist than were sent.
type Completion struct {
	Values  []string
	Total   int
	HasMore bool
}

// CompleteFunc completes argument arg of a prompt or template from value.
type CompleteFunc func(c *Call, arg, value string) (Completion, error)

// Prompt is one prompt of prompts/list, served by Get.
type Prompt struct {
	Name, Title, Description string
	Arguments                []PromptArgument
	Get                      func(c *Call, args map[string]string) (Object, error)
	Complete                 CompleteFunc
}

// PromptArgument is one argument of a prompt.
type PromptArgument struct {
	Name, Description string
	Required          bool
}

func (p *Prompt) object() any {
	// Fields in the sorted order of their keys, as an Object would be.
	type arg struct {
		Description string `json:"description"`
		Name        string `json:"name"`
		Required    bool   `json:"required,omitempty"`
	}
	args := make([]arg, 0, len(p.Arguments))
	for _, a := range p.Arguments {
		args = append(args, arg{a.Description, a.Name, a.Required})
	}
	return struct {
		Arguments   []arg  `json:"arguments,omitempty"`
		Description string `json:"description,omitempty"`
		Name        string `json:"name"`
		Title       string `json:"title,omitempty"`
	}{args, p.Description, p.Name, p.Title}
}

// tool is a registered Tool with what the server derived from its schema.
type tool struct {
	*Tool
	def     Object // the Tool object of tools/list
	headers []headers.Param
	files   map[string]scan.FileSpec
	// readOnly: the annotations say readOnlyHint: true.
	readOnly bool
}

// ToolReadOnly reports whether the tool name is registered and whether its
// annotations declare it read-only (readOnlyHint), for an authorization
// policy that lets read-only credentials call read-only tools.
func (s *Server) ToolReadOnly(name string) (readOnly, found bool) {
	t := s.toolMap[name]
	if t == nil {
		return false, false
	}
	return t.readOnly, true
}

// AddTool registers t, or says why it cannot: an empty or duplicate name,
// a missing handler, a schema, output schema or annotations that are not
// JSON, or an x-mcp-file maxSize above [Options].MaxFileBytes (the server
// would refuse bytes the tool's schema promises to accept; raise
// MaxFileBytes or lower maxSize). An x-mcp-file without maxSize accepts up
// to MaxFileBytes. Register everything before serving.
func (s *Server) AddTool(t *Tool) error {
	if t.Name == "" || t.Handler == nil {
		return errors.New("mcp: AddTool: a tool needs a Name and a Handler")
	}
	if _, dup := s.toolMap[t.Name]; dup {
		return fmt.Errorf("mcp: AddTool: duplicate tool %q", t.Name)
	}
	rt, err := s.newTool(t)
	if err != nil {
		return fmt.Errorf("mcp: AddTool %s: %w", t.Name, err)
	}
	if t.TaskSupport != TaskForbidden {
		s.enableTasks()
	}
	s.tools = append(s.tools, rt)
	s.toolMap[t.Name] = rt
	return nil
}

// newTool derives from t's schemas what the server needs to serve it.
func (s *Server) newTool(t *Tool) (*tool, error) {
	rt := &tool{Tool: t, def: Object{"name": t.Name}}
	var input Object
	if err := json.Unmarshal(t.InputSchema, &input); err != nil || input == nil {
		return nil, fmt.Errorf("InputSchema must be a JSON object: %v", err)
	}
	rt.def["inputSchema"] = input
	var hints struct {
		ReadOnly bool `json:"readOnlyHint"`
	}
	_ = json.Unmarshal(t.Annotations, &hints) // checked below
	rt.readOnly = hints.ReadOnly
	rt.headers = headers.Params(input)
	rt.files = toolargs.FileSpecs(input)
	for name, spec := range rt.files {
		if spec.MaxSize > s.opts.MaxFileBytes {
			return nil, fmt.Errorf("argument %q: x-mcp-file maxSize %d is above the server's MaxFileBytes %d",
				name, spec.MaxSize, s.opts.MaxFileBytes)
		}
	}
	for name, raw := range map[string]json.RawMessage{"outputSchema": t.OutputSchema, "annotations": t.Annotations} {
		if len(raw) > 0 {
			var v any
			if err := json.Unmarshal(raw, &v); err != nil {
				return nil, fmt.Errorf("%s: %v", name, err)
			}
			rt.def[name] = v
		}
	}
	for name, v := range map[string]string{"title": t.Title, "description": t.Description} {
		if v != "" {
			rt.def[name] = v
		}
	}
	return rt, nil
}

// AddResource registers a single resource: listed first on the first page
// of resources/list and read by read.
func (s *Server) AddResource(r Resource, read func(c *Call) (*Contents, error)) {
	s.resources = append(s.resources, staticResource{r, read})
}

// AddResourceTemplate registers a template and the handler of the
// resources it names.
func (s *Server) AddResourceTemplate(t ResourceTemplate, h ResourceHandler) {
	if h.Read == nil {
		panic("mcp: AddResourceTemplate " + t.URITemplate + ": a Read handler is required")
	}
	s.templates = append(s.templates, &template{t, h})
}

// AddPrompt registers a prompt; prompts/list and prompts/get are offered
// once one is registered.
func (s *Server) AddPrompt(p *Prompt) {
	if p.Name == "" || p.Get == nil {
		panic("mcp: AddPrompt: a prompt needs a Name and Get")
	}
	s.prompts = append(s.prompts, p)
}

type staticResource struct {
	Resource
	read func(c *Call) (*Contents, error)
}

type template struct {
	ResourceTemplate
	ResourceHandler
}

// AddMethod serves a request method of the application's own (SEP-2631's
// files/*) in both eras, before serving: h reads [Call.Param] and returns
// the result, or an error (an *[Error] as it is, any other -32603).
func (s *Server) AddMethod(name string, h func(c *Call) (any, error)) {
	if s.methods[name] != nil {
		panic("mcp: AddMethod: " + name + " is served already")
	}
	s.methods[name] = &method{legacy: true, modern: true, run: h}
}
