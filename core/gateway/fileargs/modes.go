package fileargs

import (
	"bytes"
	"encoding/json"
	"slices"
)

// Transfer modes (SEP-2631): an x-mcp-file argument's transferModes say
// how a client may pass the file: "inline" (a data URI) or "upload" (the
// mcp-file:// URI of a file uploaded first).
const (
	ModeInline = "inline"
	ModeUpload = "upload"
)

// TakesUpload reports whether the upstream itself takes file URIs for
// the argument: the gateway then forwards them as they are.
func (s Spec) TakesUpload() bool { return slices.Contains(s.TransferModes, ModeUpload) }

// AdvertiseUpload returns the tools/list result with transferModes
// ["inline","upload"] on every x-mcp-file argument whose upstream takes
// only inline data (changed: at least one), the gateway expanding the
// file URIs it is given (expand.go). Anything unreadable is left as it is.
func AdvertiseUpload(result json.RawMessage) (out json.RawMessage, changed bool) {
	if !bytes.Contains(result, []byte(`"x-mcp-file"`)) {
		return result, false // no file argument (the common case): no decoding
	}
	var page map[string]json.RawMessage
	var tools []map[string]json.RawMessage
	if json.Unmarshal(result, &page) != nil || json.Unmarshal(page["tools"], &tools) != nil {
		return result, false
	}
	for _, tool := range tools {
		if schema, ok := withUpload(tool["inputSchema"]); ok {
			tool["inputSchema"], changed = schema, true
		}
	}
	if !changed {
		return result, false
	}
	page["tools"] = marshal(tools)
	return marshal(page), true
}

// withUpload is an input schema with "upload" added to its file
// arguments' transferModes.
func withUpload(raw json.RawMessage) (json.RawMessage, bool) {
	var schema, props map[string]json.RawMessage
	if json.Unmarshal(raw, &schema) != nil || json.Unmarshal(schema["properties"], &props) != nil {
		return raw, false
	}
	changed := false
	for name, prop := range props {
		var p map[string]json.RawMessage
		if json.Unmarshal(prop, &p) != nil || p == nil {
			continue
		}
		file := map[string]json.RawMessage{}
		switch f := p["x-mcp-file"]; {
		case len(f) == 0, string(f) == "null", string(f) == "false":
			continue
		case string(f) == "true":
		case json.Unmarshal(f, &file) != nil:
			continue
		}
		var spec Spec
		_ = json.Unmarshal(p["x-mcp-file"], &spec)
		if spec.TakesUpload() || spec.ByReference() {
			continue
		}
		file["transferModes"] = marshal([]string{ModeInline, ModeUpload})
		p["x-mcp-file"] = marshal(file)
		props[name], changed = marshal(p), true
	}
	if !changed {
		return raw, false
	}
	schema["properties"] = marshal(props)
	return marshal(schema), true
}

func marshal(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic("bug: fileargs: re-encoding a decoded schema: " + err.Error())
	}
	return b
}
