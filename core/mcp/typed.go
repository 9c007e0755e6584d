package mcp

import (
	"fmt"
	"reflect"

	"github.com/mcpblob/mcpblob/core/mcp/scan"
	"github.com/mcpblob/mcpblob/core/mcp/toolargs"
)

// AddTypedTool registers t with h as its handler: the arguments are
// checked against t.InputSchema (type, length and range bounds, enum,
// items, required, additionalProperties false; a failure is an isError
// result naming the argument), then decoded into In, a struct, by their
// json tags. An integer may come in any JSON notation (60, 6e1). A field
// of type *[File] receives the x-mcp-file argument of its name, decoded
// while it arrived and never held in memory (nil when absent and not
// required; a refused value ends the call with its [FileError]).
//
// With no InputSchema, the schema is derived from In: a property per
// exported field (named by its json tag; required unless omitempty;
// described by a `description:"…"` tag), additionalProperties false, and
// an empty x-mcp-file descriptor for a *File (up to MaxFileBytes, any
// media type: give the schema to say more). t.Handler must be nil.
func AddTypedTool[In any](s *Server, t *Tool, h func(c *Call, in In) (*ToolResult, error)) error {
	if t.Handler != nil || h == nil {
		return fmt.Errorf("mcp: AddTypedTool %s: give the handler as h, not as Tool.Handler", t.Name)
	}
	typed, schema, err := toolargs.NewTyped(t.Name, t.InputSchema, reflect.TypeFor[In](), reflect.TypeFor[*File]())
	if err != nil {
		return fmt.Errorf("mcp: AddTypedTool %s: %w", t.Name, err)
	}
	tt := *t
	tt.InputSchema = schema
	tt.Handler = func(c *Call) (*ToolResult, error) {
		var v In
		switch bad, err := typed.Fill(c.args, c.diverted, &v, func(name string) (any, error) { return c.File(name) }); {
		case err != nil:
			return nil, err
		case bad != "":
			return ToolError("%s", bad), nil
		}
		return h(c, v)
	}
	return s.AddTool(&tt)
}

// diverted reports a string argument taken out of the message while it
// arrived (over 64 KiB): the rebuilt arguments read "" for it.
func (c *Call) diverted(name string) bool {
	return c.files.Get("/params/arguments/"+scan.PathElem(name)) != nil
}
