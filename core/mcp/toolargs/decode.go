package toolargs

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/mcpblob/mcpblob/core/mcp/scan"
)

// Decode decodes args, checked by Check, into the struct v points to:
// integers in any notation (60, 6e1), x-mcp-file arguments left out. A
// value the checks let through but v cannot hold (a keyword they do not
// check) is a problem naming the argument; "" when v was filled.
func (r *Rules) Decode(args map[string]json.RawMessage, v any) string {
	plain := make(map[string]json.RawMessage, len(args))
	for name, raw := range args {
		p := r.props[name]
		switch {
		case p != nil && p.File != nil:
			continue
		case p != nil && p.Type == "integer" && string(raw) != "null":
			n, _ := scan.Integer(raw, p.min(), p.max()) // checked
			raw = strconv.AppendInt(nil, n, 10)
		}
		plain[name] = raw
	}
	b, err := json.Marshal(plain)
	if err == nil {
		err = json.Unmarshal(b, v)
	}
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &te) && te.Field != "":
		return fmt.Sprintf("Argument %q must be a %s", te.Field, te.Type)
	case err != nil:
		return fmt.Sprintf("Invalid arguments: %v", err)
	}
	return ""
}

// Typed is a typed tool's argument handling: the checks of its schema and
// the struct fields that hold its x-mcp-file arguments.
type Typed struct {
	rules *Rules
	files []field
}

// NewTyped returns the argument handling of tool for struct type in, and
// the input schema: schema, or when nil one derived from in (see derive).
// file is the type of the fields that hold x-mcp-file arguments.
func NewTyped(tool string, schema json.RawMessage, in, file reflect.Type) (*Typed, json.RawMessage, error) {
	if in.Kind() != reflect.Struct {
		return nil, nil, fmt.Errorf("the arguments type must be a struct, not %s", in)
	}
	if schema == nil {
		schema = derive(in, file)
	}
	rules, err := Parse(tool, schema)
	if err != nil {
		return nil, nil, fmt.Errorf("InputSchema: %w", err)
	}
	return &Typed{rules: rules, files: fileFields(in, file)}, schema, nil
}

// Fill checks args and decodes them into the struct v points to; file
// returns the value of an x-mcp-file argument present in args. problem is
// what the caller must fix, naming the argument; err is file's error.
func (t *Typed) Fill(args map[string]json.RawMessage, diverted func(string) bool, v any,
	file func(name string) (any, error)) (problem string, err error) {
	if bad := t.rules.Check(args, diverted); bad != "" {
		return bad, nil
	}
	if bad := t.rules.Decode(args, v); bad != "" {
		return bad, nil
	}
	rv := reflect.ValueOf(v).Elem()
	for _, ff := range t.files {
		if raw, ok := args[ff.Name]; !ok || string(raw) == "null" {
			continue // absent and not required (checked)
		}
		f, err := file(ff.Name)
		if err != nil {
			return "", err
		}
		rv.FieldByIndex(ff.Index).Set(reflect.ValueOf(f))
	}
	return "", nil
}

// FileSpecs returns the x-mcp-file descriptors of a schema's properties.
func FileSpecs(schema map[string]any) map[string]scan.FileSpec {
	props, _ := schema["properties"].(map[string]any)
	var out map[string]scan.FileSpec
	for name, p := range props {
		p, _ := p.(map[string]any)
		raw, ok := p["x-mcp-file"]
		if !ok {
			continue
		}
		b, _ := json.Marshal(raw)
		var spec scan.FileSpec
		_ = json.Unmarshal(b, &spec)
		if out == nil {
			out = map[string]scan.FileSpec{}
		}
		out[name] = spec
	}
	return out
}

// field is a struct field that holds an x-mcp-file argument.
type field struct {
	Index []int  // for reflect.Value.FieldByIndex
	Name  string // the argument
}

// fileFields returns the exported fields of struct type t whose type is
// file.
func fileFields(t, file reflect.Type) []field {
	var out []field
	for _, f := range reflect.VisibleFields(t) {
		if f.Type == file && f.IsExported() {
			out = append(out, field{Index: f.Index, Name: jsonName(f)})
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

// derive is the input schema of struct type t: a property per exported
// field, named by its json tag, required unless omitempty, described by
// its `description:"…"` tag; additionalProperties false. A field of type
// file is an x-mcp-file argument with an empty descriptor.
func derive(t, file reflect.Type) json.RawMessage {
	props := map[string]any{}
	required := []string{}
	for _, f := range reflect.VisibleFields(t) {
		if !f.IsExported() || f.Anonymous || f.Tag.Get("json") == "-" {
			continue
		}
		name := jsonName(f)
		p := typeSchema(f.Type, file)
		if d := f.Tag.Get("description"); d != "" {
			p["description"] = d
		}
		props[name] = p
		if !strings.Contains(f.Tag.Get("json"), ",omitempty") {
			required = append(required, name)
		}
	}
	o := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		o["required"] = required
	}
	b, _ := json.Marshal(o)
	return b
}

// typeSchema is the JSON Schema of a Go type.
func typeSchema(t, file reflect.Type) map[string]any {
	if t == file {
		return map[string]any{"type": "string", "format": "uri", "x-mcp-file": map[string]any{}}
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return map[string]any{"type": "string"}
	case reflect.Bool:
		return map[string]any{"type": "boolean"}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return map[string]any{"type": "integer"}
	case reflect.Float32, reflect.Float64:
		return map[string]any{"type": "number"}
	case reflect.Slice, reflect.Array:
		return map[string]any{"type": "array", "items": typeSchema(t.Elem(), file)}
	}
	return map[string]any{"type": "object"}
}
