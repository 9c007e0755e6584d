package headers

import (
	"encoding/base64"
	"encoding/json"
	"math/big"
	"mime"
	"net/http"
	"strings"

	"github.com/mcpblob/mcpblob/core/mcp/jsonrpc"
)

// Decode trims optional whitespace and decodes the
// "=?base64?…?=" form (SEP-2243). A value without both markers is literal.
// ok is false for a sentinel whose payload is not valid padded base64 or
// not UTF-8.
func Decode(v string) (string, bool) {
	v = strings.Trim(v, " \t")
	inner, ok := strings.CutPrefix(v, "=?base64?")
	if !ok || !strings.HasSuffix(inner, "?=") {
		return v, true
	}
	inner = strings.TrimSuffix(inner, "?=")
	b, err := base64.StdEncoding.Strict().DecodeString(inner)
	if err != nil {
		return "", false
	}
	return string(b), true
}

// Mismatch is the -32020 error (HTTP 400) for a header that contradicts
// the body or is missing, saying why.
func Mismatch(why string) *jsonrpc.Error {
	return jsonrpc.NewError(jsonrpc.CodeHeaderMismatch, "Header mismatch: "+why, nil).WithStatus(http.StatusBadRequest)
}

// CheckName validates Mcp-Name against the body value; present says
// whether the body has one.
func CheckName(h Getter, body string, present bool) *jsonrpc.Error {
	raw := h.Get(Name)
	if !present {
		if raw != "" {
			return Mismatch("Mcp-Name is set but the request has no name")
		}
		return nil
	}
	if raw == "" {
		return Mismatch("Mcp-Name header is required")
	}
	v, ok := Decode(raw)
	if !ok {
		return Mismatch("Mcp-Name is not valid base64")
	}
	if v != body {
		return Mismatch("Mcp-Name does not match the request body")
	}
	return nil
}

// CheckMethod validates Mcp-Method against the request's method.
func CheckMethod(h Getter, method string) *jsonrpc.Error {
	if hm, ok := Decode(h.Get(Method)); !ok || hm != method {
		if h.Get(Method) == "" {
			return Mismatch("Mcp-Method header is required")
		}
		return Mismatch("Mcp-Method does not match the request method")
	}
	return nil
}

// CheckNameParam validates Mcp-Name against the params member it mirrors
// for method (see [CheckName]); a method without one needs no Mcp-Name.
func CheckNameParam(h Getter, method string, params map[string]json.RawMessage) *jsonrpc.Error {
	p := nameParam(method)
	if p == "" {
		return nil
	}
	var name string
	raw, present := params[p]
	if present && json.Unmarshal(raw, &name) != nil {
		present = false
	}
	return CheckName(h, name, present)
}

// nameParam names the params member Mcp-Name mirrors.
func nameParam(method string) string {
	switch method {
	case "tools/call", "prompts/get":
		return "name"
	case "resources/read":
		return "uri"
	case "tasks/get", "tasks/update", "tasks/cancel":
		return "taskId"
	}
	return ""
}

// Param is one x-mcp-header annotated property of a tool's input.
type Param struct {
	header string   // header suffix, e.g. "Blob-Key"
	path   []string // property path from the arguments object
	typ    string   // string, integer or boolean
}

// Params returns the x-mcp-header annotated properties of an input schema
// (a decoded JSON Schema object), nil when there are none.
func Params(schema map[string]any) []Param {
	var out []Param
	collectParams(schema, nil, &out)
	return out
}

// collectParams walks plain properties chains of an input schema.
func collectParams(schema map[string]any, path []string, out *[]Param) {
	props, _ := schema["properties"].(map[string]any)
	for name, p := range props {
		ps, ok := p.(map[string]any)
		if !ok {
			continue
		}
		sub := append(append([]string(nil), path...), name)
		if h, ok := ps["x-mcp-header"].(string); ok {
			typ, _ := ps["type"].(string)
			*out = append(*out, Param{header: h, path: sub, typ: typ})
		}
		if t, _ := ps["type"].(string); t == "object" {
			collectParams(ps, sub, out)
		}
	}
}

// CheckParams validates every Mcp-Param-* header of a tools/call against
// the arguments (SEP-2243): present in the body means the header is
// required and must match; absent or null means no header.
func CheckParams(h Getter, hs []Param, args map[string]json.RawMessage) *jsonrpc.Error {
	for _, ph := range hs {
		val, found := lookupPath(args, ph.path)
		raw := h.Get(ParamPrefix + ph.header)
		if !found {
			if raw != "" {
				return Mismatch(ParamPrefix + ph.header + " is set but the argument is absent")
			}
			continue
		}
		if raw == "" {
			return Mismatch(ParamPrefix + ph.header + " header is required")
		}
		hv, ok := Decode(raw)
		if !ok {
			return Mismatch(ParamPrefix + ph.header + " is not valid base64")
		}
		if !paramMatches(hv, val) {
			return Mismatch(ParamPrefix + ph.header + " does not match the request body")
		}
	}
	return nil
}

func lookupPath(args map[string]json.RawMessage, path []string) (json.RawMessage, bool) {
	cur, ok := args[path[0]]
	for _, p := range path[1:] {
		var m map[string]json.RawMessage
		if !ok || len(cur) == 0 || json.Unmarshal(cur, &m) != nil {
			return nil, false
		}
		cur, ok = m[p]
	}
	if !ok || len(cur) == 0 || string(cur) == "null" {
		return nil, false
	}
	return cur, true
}

func paramMatches(header string, body json.RawMessage) bool {
	switch body[0] {
	case '"':
		var s string
		return json.Unmarshal(body, &s) == nil && s == header
	case 't', 'f':
		return string(body) == header
	default:
		a, ok1 := new(big.Float).SetString(string(body))
		b, ok2 := new(big.Float).SetString(header)
		return ok1 && ok2 && a.Cmp(b) == 0
	}
}

// IsJSONMediaType reports whether the Content-Type value ct names
// application/json (parameters allowed); the exact value, which nearly
// every client sends, is taken without parsing.
func IsJSONMediaType(ct string) bool {
	if ct == "application/json" {
		return true
	}
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && mt == "application/json"
}
