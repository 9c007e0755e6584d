package fileargs

import (
	"encoding/json"
	"errors"
)

// toolsPage is the part of a tools/list result read here.
type toolsPage struct {
	Tools []struct {
		Name        string `json:"name"`
		InputSchema struct {
			Properties map[string]schemaProp `json:"properties"`
		} `json:"inputSchema"`
	} `json:"tools"`
	NextCursor string `json:"nextCursor"`
}

// schemaProp is an input schema property, as far as it is read here.
type schemaProp struct {
	File json.RawMessage `json:"x-mcp-file"`
}

// ParsePage reads a tools/list result: the file arguments of each tool
// listed, by tool name (nil for a tool without any), and the next cursor.
func ParsePage(result json.RawMessage) (tools map[string]map[string]Spec, next string, err error) {
	var page toolsPage
	if err := json.Unmarshal(result, &page); err != nil {
		return nil, "", errors.New("tools/list result is not a list of tools")
	}
	tools = make(map[string]map[string]Spec, len(page.Tools))
	for _, t := range page.Tools {
		tools[t.Name] = fileSpecs(t.InputSchema.Properties)
	}
	return tools, page.NextCursor, nil
}

// fileSpecs reads the x-mcp-file descriptors of a schema's properties.
func fileSpecs(props map[string]schemaProp) map[string]Spec {
	var out map[string]Spec
	for name, p := range props {
		if len(p.File) == 0 || string(p.File) == "null" || string(p.File) == "false" {
			continue
		}
		var spec Spec
		_ = json.Unmarshal(p.File, &spec) // `true` or a malformed object: a file, not bounded
		if out == nil {
			out = map[string]Spec{}
		}
		out[name] = spec
	}
	return out
}
