package mcp

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/mcpblob/mcpblob/core/mcp/scan"
)

// TypedHandler serves a tools/call whose arguments were checked against
// the tool's input schema and decoded into In (see [AddTypedTool]).
type TypedHandler[In any] func(c *Call, in In) (*ToolResult, error)

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
func AddTypedTool[In any](s *Server, t *Tool, h TypedHandler[In]) error {
	if t.Handler != nil || h == nil {
		return fmt.Errorf("mcp: AddTypedTool %s: give the handler as h, not as Tool.Handler", t.Name)
	}
	in := reflect.TypeFor[In]()
	if in.Kind() != reflect.Struct {
		return fmt.Errorf("mcp: AddTypedTool %s: In must be a struct, not %s", t.Name, in)
	}
	tt := *t
	if tt.InputSchema == nil {
		tt.InputSchema = deriveSchema(in)
	}
	rules, err := newArgRules(t.Name, tt.InputSchema)
	if err != nil {
		return fmt.Errorf("mcp: AddTypedTool %s: InputSchema: %w", t.Name, err)
	}
	files := fileFieldsOf(in)
	tt.Handler = func(c *Call) (*ToolResult, error) {
		if bad := rules.check(c); bad != "" {
			return ToolError("%s", bad), nil
		}
		var v In
		if res, err := decodeArgs(c, rules, &v, files); res != nil || err != nil {
			return res, err
		}
		return h(c, v)
	}
	return s.AddTool(&tt)
}

// fileField is a *File field of a typed tool's arguments.
type fileField struct {
	index []int
	name  string
}

var fileType = reflect.TypeFor[*File]()

// fileFieldsOf returns the *File fields of struct type in.
func fileFieldsOf(in reflect.Type) []fileField {
	var out []fileField
	for _, f := range reflect.VisibleFields(in) {
		if f.Type == fileType && f.IsExported() {
			out = append(out, fileField{index: f.Index, name: jsonName(f)})
		}
	}
	return out
}

// jsonName is the argument name of a struct field.
func jsonName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	if name == "" {
		return f.Name
	}
	return name
}

// decodeArgs decodes the checked arguments into v: integers in canonical
// notation, files by Call.File. A value the checks let through but v
// cannot hold (a schema keyword they do not check) is an isError result.
func decodeArgs(c *Call, rules *argRules, v any, files []fileField) (*ToolResult, error) {
	args := make(map[string]json.RawMessage, len(c.args))
	for name, raw := range c.args {
		p := rules.props[name]
		switch {
		case p != nil && p.File != nil:
			continue // set below, from the scanner
		case p != nil && p.Type == "integer" && string(raw) != "null":
			n, _ := scan.Integer(raw, p.min(), p.max()) // checked
			raw = strconv.AppendInt(nil, n, 10)
		}
		args[name] = raw
	}
	b, err := json.Marshal(args)
	if err == nil {
		err = json.Unmarshal(b, v)
	}
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &te) && te.Field != "":
		return ToolError("Argument %q must be a %s", te.Field, te.Type), nil
	case err != nil:
		return ToolError("Invalid arguments: %v", err), nil
	}
	rv := reflect.ValueOf(v).Elem()
	for _, ff := range files {
		if raw, ok := c.args[ff.name]; !ok || string(raw) == "null" {
			continue // absent and not required (checked)
		}
		f, err := c.File(ff.name)
		if err != nil {
			return nil, err
		}
		rv.FieldByIndex(ff.index).Set(reflect.ValueOf(f))
	}
	return nil, nil
}

// deriveSchema is the input schema of struct type in.
func deriveSchema(in reflect.Type) json.RawMessage {
	props := Object{}
	required := []string{}
	for _, f := range reflect.VisibleFields(in) {
		if !f.IsExported() || f.Anonymous || f.Tag.Get("json") == "-" {
			continue
		}
		name := jsonName(f)
		p := typeSchema(f.Type)
		if d := f.Tag.Get("description"); d != "" {
			p["description"] = d
		}
		props[name] = p
		if !strings.Contains(f.Tag.Get("json"), ",omitempty") {
			required = append(required, name)
		}
	}
	o := Object{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		o["required"] = required
	}
	b, _ := json.Marshal(o)
	return b
}

// typeSchema is the JSON Schema of a Go type.
func typeSchema(t reflect.Type) Object {
	if t == fileType {
		return Object{"type": "string", "format": "uri", "x-mcp-file": Object{}}
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return Object{"type": "string"}
	case reflect.Bool:
		return Object{"type": "boolean"}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return Object{"type": "integer"}
	case reflect.Float32, reflect.Float64:
		return Object{"type": "number"}
	case reflect.Slice, reflect.Array:
		return Object{"type": "array", "items": typeSchema(t.Elem())}
	}
	return Object{"type": "object"}
}
