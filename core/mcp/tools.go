package mcp

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/mcpblob/mcpblob/core/mcp/headers"
	"github.com/mcpblob/mcpblob/core/mcp/jsonrpc"
)

// encodeTools encodes the Tool objects of tools/list, in registration order.
func (s *Server) encodeTools() ([]byte, error) {
	defs := make([]any, 0, len(s.tools))
	for _, t := range s.tools {
		defs = append(defs, t.def)
	}
	return json.Marshal(defs)
}

func (s *Server) toolsList(c *Call) (any, error) {
	if _, e := c.cursorParam(true); e != nil {
		return nil, e
	}
	// Tools are added only while the server is built: the list is encoded
	// on first use rather than on every tools/list (reflection over the
	// schemas was the largest cost of a small request).
	if !c.modern {
		res, err := s.toolsResult()
		if err != nil {
			return nil, fmt.Errorf("mcp: encode tools: %w", err)
		}
		return encodedWhole(res), nil
	}
	raw, err := s.toolsJSON()
	if err != nil {
		return nil, fmt.Errorf("mcp: encode tools: %w", err)
	}
	return encodedResult{name: "tools", value: raw}, nil
}

// encodeToolsResult encodes the tools/list result of the 2025 eras, as
// encodedResult.encode would build it on each call.
func (s *Server) encodeToolsResult() ([]byte, error) {
	raw, err := s.toolsJSON()
	if err != nil {
		return nil, err
	}
	b, err := (&encodedResult{name: "tools", value: raw}).encode(Object{})
	return slices.Clip(b), err // shared: an append must copy
}

// toolsPrecheck resolves the tool and, in 2026-07-28, validates Mcp-Param
// headers and required client capabilities before the response starts.
func (s *Server) toolsPrecheck(c *Call) *Error {
	var name string
	if e := c.param("name", &name); e != nil {
		return e
	}
	t := s.toolMap[name]
	if t == nil {
		return jsonrpc.InvalidParams("Unknown tool: %s", name)
	}
	c.tool = t
	noteTool(c, t)
	raw, ok := c.params["arguments"]
	if ok && string(raw) != "null" && (len(raw) == 0 || raw[0] != '{') {
		return jsonrpc.InvalidParams("Invalid params: arguments must be an object")
	}
	if !c.modern {
		return nil
	}
	if e := headers.CheckParams(c.header, t.headers, c.args); e != nil {
		return e
	}
	var missing []string
	for _, cp := range t.Requires {
		if !c.HasCapability(cp) {
			missing = append(missing, cp)
		}
	}
	if len(missing) > 0 {
		return jsonrpc.MissingCapability(missing...)
	}
	if t.TaskSupport == TaskRequired && !c.hasExtension(ExtTasks) {
		return missingExtension(ExtTasks)
	}
	return nil
}

func (s *Server) toolsStream(c *Call) bool {
	if c.progressToken != nil {
		return true
	}
	if c.tool == nil {
		return false
	}
	return c.tool.Streams == StreamAlways || c.tool.Streams == StreamForInput && !c.modern
}

func (s *Server) toolsCall(c *Call) (any, error) {
	if c.args == nil {
		c.args = map[string]json.RawMessage{}
	}
	res, err := c.tool.Handler(c)
	var fe *FileError
	if errors.As(err, &fe) {
		return fe.result().object(), nil
	}
	if err != nil {
		if o, ierr := s.inputOutcome(c, err); o != nil || ierr != nil {
			return o, ierr
		}
		return nil, err
	}
	if res == nil {
		return nil, errors.New("mcp: tool " + c.tool.Name + " returned no result")
	}
	return res.object(), nil
}
