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
	in := reflect.TypeFor[In]()
	if in.Kind() != reflect.Struct {
		return fmt.Errorf("mcp: AddTypedTool %s: In must be a struct, not %s", t.Name, in)
	}
	tt := *t
	if tt.InputSchema == nil {
		tt.InputSchema = toolargs.Derive(in, fileType)
	}
	rules, err := toolargs.Parse(t.Name, tt.InputSchema)
	if err != nil {
		return fmt.Errorf("mcp: AddTypedTool %s: InputSchema: %w", t.Name, err)
	}
	files := toolargs.FileFields(in, fileType)
	tt.Handler = func(c *Call) (*ToolResult, error) {
		var v In
		if bad := rules.Check(c.args, c.diverted); bad != "" {
			return ToolError("%s", bad), nil
		}
		if bad := rules.Decode(c.args, &v); bad != "" {
			return ToolError("%s", bad), nil
		}
		if err := c.fillFiles(reflect.ValueOf(&v).Elem(), files); err != nil {
			return nil, err
		}
		return h(c, v)
	}
	return s.AddTool(&tt)
}

var fileType = reflect.TypeFor[*File]()

// diverted reports a string argument taken out of the message while it
// arrived (over 64 KiB): the rebuilt arguments read "" for it.
func (c *Call) diverted(name string) bool {
	return c.files.Get("/params/arguments/"+scan.PathElem(name)) != nil
}

// fillFiles sets the *File fields of v from the call's file arguments.
func (c *Call) fillFiles(v reflect.Value, files []toolargs.Field) error {
	for _, ff := range files {
		if raw, ok := c.args[ff.Name]; !ok || string(raw) == "null" {
			continue // absent and not required (checked)
		}
		f, err := c.File(ff.Name)
		if err != nil {
			return err
		}
		v.FieldByIndex(ff.Index).Set(reflect.ValueOf(f))
	}
	return nil
}
