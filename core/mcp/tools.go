package mcp

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mcpblob/mcpblob/storage"
)

// tool is one MCP tool.
type tool struct {
	name string
	def  obj // the Tool object of tools/list
	// streams: answer over SSE in 2025-11-25 (logs, progress,
	// server-to-client requests); streamsModern: also in 2026-07-28.
	streams, streamsModern bool
	// stateful: multi-round MRTR state lives in a signed requestState.
	stateful bool
	// anyCap: the tool adapts to whatever capabilities the client has.
	anyCap bool
	// taskRequired: 2026-07-28 clients must negotiate the tasks extension.
	taskRequired bool
	// requires lists client capabilities the tool needs (2026-07-28:
	// -32021 before any work when absent).
	requires []string
	headers  []paramHeader
	run      func(c *call, args map[string]json.RawMessage) (obj, error)
	// files lists the x-mcp-file arguments (reader.go decodes them as they
	// arrive); directKey, when it can name the storage key from the small
	// arguments seen so far, lets them go straight to storage.
	files     map[string]fileSpec
	directKey func(args map[string]string) (string, bool)
}

func (s *Server) addTool(t *tool) {
	if s.toolMap == nil {
		s.toolMap = map[string]*tool{}
	}
	if _, dup := s.toolMap[t.name]; dup {
		panic("bug: duplicate tool " + t.name)
	}
	t.def["name"] = t.name
	if schema, ok := t.def["inputSchema"].(obj); ok {
		collectParamHeaders(schema, nil, &t.headers)
	}
	s.tools = append(s.tools, t)
	s.toolMap[t.name] = t
}

// encodeTools encodes the Tool objects of tools/list, in registration order.
func (s *Server) encodeTools() ([]byte, error) {
	defs := make([]any, 0, len(s.tools))
	for _, t := range s.tools {
		defs = append(defs, t.def)
	}
	return json.Marshal(defs)
}

func (s *Server) toolsList(c *call) (any, error) {
	var cursor string
	if e := c.param("cursor", &cursor); e != nil {
		return nil, e
	}
	if cursor != "" {
		return nil, invalidParams("Invalid params: invalid cursor")
	}
	// Tools are added only while the server is built: the list is encoded
	// on first use rather than on every tools/list (reflection over the
	// schemas was the largest cost of a small request).
	raw, err := s.toolsJSON()
	if err != nil {
		return nil, fmt.Errorf("mcp: encode tools: %w", err)
	}
	return encodedResult{name: "tools", value: raw}, nil
}

// toolsPrecheck resolves the tool and, in 2026-07-28, validates Mcp-Param
// headers and required client capabilities before the response starts.
func (s *Server) toolsPrecheck(c *call) *Error {
	var name string
	if e := c.param("name", &name); e != nil {
		return e
	}
	t := s.toolMap[name]
	if t == nil {
		return invalidParams("Unknown tool: %s", name)
	}
	c.tool = t
	if raw, ok := c.params["arguments"]; ok && string(raw) != "null" && (len(raw) == 0 || raw[0] != '{') {
		return invalidParams("Invalid params: arguments must be an object")
	}
	if c.modern {
		if e := checkParamHeaders(c.header, t.headers, c.params["arguments"]); e != nil {
			return e
		}
		var missing []string
		for _, cp := range t.requires {
			if !c.hasCap(cp) {
				missing = append(missing, cp)
			}
		}
		if len(missing) > 0 {
			return missingCapability(missing...)
		}
		if t.taskRequired && !c.hasExtension(ExtTasks) {
			return missingExtension(ExtTasks)
		}
	}
	return nil
}

func (s *Server) toolsStream(c *call) bool {
	if c.progressToken != nil {
		return true
	}
	if c.tool == nil {
		return false
	}
	if c.modern {
		return c.tool.streamsModern
	}
	return c.tool.streams
}

func (s *Server) toolsCall(c *call) (any, error) {
	args := map[string]json.RawMessage{}
	if raw, ok := c.params["arguments"]; ok && string(raw) != "null" {
		if err := json.Unmarshal(raw, &args); err != nil {
			return nil, invalidParams("Invalid params: arguments must be an object")
		}
	}
	return c.tool.run(c, args)
}

// toolError is a tool execution error (SEP-1303): a result with isError.
func toolError(format string, a ...any) obj {
	return obj{"content": []any{textBlock(fmt.Sprintf(format, a...))}, "isError": true}
}

func textBlock(s string) obj { return obj{"type": "text", "text": s} }

// argString reads a string argument; required reports absence as an error.
func argString(args map[string]json.RawMessage, name string, required bool) (string, string) {
	raw, ok := args[name]
	if !ok || string(raw) == "null" {
		if required {
			return "", fmt.Sprintf("Argument %q is required", name)
		}
		return "", ""
	}
	var v string
	if json.Unmarshal(raw, &v) != nil {
		return "", fmt.Sprintf("Argument %q must be a string", name)
	}
	return v, ""
}

func argInt(args map[string]json.RawMessage, name string, def, min, max int) (int, string) {
	raw, ok := args[name]
	if !ok || string(raw) == "null" {
		return def, ""
	}
	var v int
	if json.Unmarshal(raw, &v) != nil || v < min || v > max {
		return 0, fmt.Sprintf("Argument %q must be an integer in [%d, %d]", name, min, max)
	}
	return v, ""
}

// Schemas shared by the blob tools.
func keyProp(desc string) obj {
	return obj{"type": "string", "description": desc, "minLength": 1, "maxLength": storage.MaxKeyLen, "x-mcp-header": "Blob-Key"}
}

func blobSchema() obj {
	return obj{
		"type": "object",
		"properties": obj{
			"uri":      obj{"type": "string", "description": "resource URI (blob:///{key})"},
			"key":      obj{"type": "string"},
			"size":     obj{"type": "integer", "minimum": 0, "description": "bytes"},
			"sha256":   obj{"type": "string", "description": "lower-case hex SHA-256 of the content"},
			"mimeType": obj{"type": "string"},
		},
		"required": []string{"uri", "key", "size", "sha256", "mimeType"},
	}
}

func blobStruct(info storage.Info) obj {
	return obj{"uri": BlobURI(info.Key), "key": info.Key, "size": info.Size, "sha256": info.SHA256, "mimeType": mediaType(info)}
}

func resourceLink(info storage.Info) obj {
	l := resourceObj(info)
	l["type"] = "resource_link"
	return l
}

func structuredText(v any) obj {
	b, _ := json.Marshal(v)
	return textBlock(string(b))
}

func keyError(key string, err error) obj {
	switch {
	case errors.Is(err, storage.ErrInvalidKey):
		return toolError("Invalid key %q: %v", key, err)
	case errors.Is(err, storage.ErrNotFound):
		return toolError("Blob %q not found", key)
	}
	return nil
}

func (s *Server) registerTools() {
	s.addTool(&tool{
		name: "list_blobs",
		def: obj{
			"title":       "List blobs",
			"description": "List stored blobs whose keys start with prefix, one page at a time.",
			"inputSchema": obj{
				"type": "object",
				"properties": obj{
					"prefix": obj{"type": "string", "description": "key prefix; empty lists everything"},
					"cursor": obj{"type": "string", "description": "nextCursor of a previous page"},
					"limit":  obj{"type": "integer", "minimum": 1, "maximum": 1000, "description": "page size (default 100)"},
				},
				"additionalProperties": false,
			},
			"outputSchema": obj{
				"type": "object",
				"properties": obj{
					"blobs":      obj{"type": "array", "items": blobSchema()},
					"nextCursor": obj{"type": "string"},
				},
				"required": []string{"blobs"},
			},
			"annotations": obj{"readOnlyHint": true, "destructiveHint": false, "idempotentHint": true, "openWorldHint": false},
		},
		run: s.listBlobs,
	})
	s.addTool(&tool{
		name: "stat_blob",
		def: obj{
			"title":       "Describe a blob",
			"description": "Return a blob's size, SHA-256 and media type, with a resource link to read it.",
			"inputSchema": obj{
				"type":                 "object",
				"properties":           obj{"key": keyProp("the blob's key")},
				"required":             []string{"key"},
				"additionalProperties": false,
			},
			"outputSchema": blobSchema(),
			"annotations":  obj{"readOnlyHint": true, "destructiveHint": false, "idempotentHint": true, "openWorldHint": false},
		},
		run: s.statBlob,
	})
	s.addTool(&tool{
		name: "delete_blob",
		def: obj{
			"title":       "Delete a blob",
			"description": "Delete a stored blob. Subscribers get resources/updated and list_changed notifications.",
			"inputSchema": obj{
				"type":                 "object",
				"properties":           obj{"key": keyProp("the blob's key")},
				"required":             []string{"key"},
				"additionalProperties": false,
			},
			"outputSchema": func() obj {
				o := blobSchema()
				o["properties"].(obj)["deleted"] = obj{"type": "boolean"}
				o["required"] = append(o["required"].([]string), "deleted")
				return o
			}(),
			"annotations": obj{"readOnlyHint": false, "destructiveHint": true, "idempotentHint": true, "openWorldHint": false},
		},
		run: s.deleteBlob,
	})
	s.addTool(&tool{
		name: "get_download_link",
		def: obj{
			"title":       "Get a download link",
			"description": "Mint a signed, expiring HTTPS link that downloads the blob's raw bytes.",
			"inputSchema": obj{
				"type": "object",
				"properties": obj{
					"key":        keyProp("the blob's key"),
					"ttlSeconds": obj{"type": "integer", "minimum": 1, "maximum": 86400, "description": "link lifetime (default 900)"},
					"filename":   obj{"type": "string", "maxLength": 255, "description": "download filename (default: the stored filename, else the key's last segment)"},
					"singleUse":  obj{"type": "boolean", "description": "the link serves one download (default false)"},
				},
				"required":             []string{"key"},
				"additionalProperties": false,
			},
			"outputSchema": func() obj {
				o := blobSchema()
				p := o["properties"].(obj)
				p["url"] = obj{"type": "string"}
				p["expiresAt"] = obj{"type": "string", "format": "date-time"}
				o["required"] = append(o["required"].([]string), "url", "expiresAt")
				return o
			}(),
			"annotations": obj{"readOnlyHint": true, "destructiveHint": false, "idempotentHint": false, "openWorldHint": false},
		},
		run: s.downloadLink,
	})
	s.registerUploadTools() // uploads.go
}

func (s *Server) listBlobs(c *call, args map[string]json.RawMessage) (obj, error) {
	prefix, bad := argString(args, "prefix", false)
	if bad != "" {
		return toolError("%s", bad), nil
	}
	cursor, bad := argString(args, "cursor", false)
	if bad != "" {
		return toolError("%s", bad), nil
	}
	limit, bad := argInt(args, "limit", s.opts.PageSize, 1, 1000)
	if bad != "" {
		return toolError("%s", bad), nil
	}
	page, err := s.backend.List(c.ctx, prefix, cursor, limit)
	if err != nil {
		if errors.Is(err, storage.ErrInvalidCursor) {
			return toolError("Invalid cursor"), nil
		}
		return nil, fmt.Errorf("mcp: list_blobs: %w", err)
	}
	blobs := make([]any, 0, len(page.Items))
	content := []any{}
	for _, info := range page.Items {
		blobs = append(blobs, blobStruct(info))
	}
	sc := obj{"blobs": blobs}
	if page.NextCursor != "" {
		sc["nextCursor"] = page.NextCursor
	}
	content = append(content, structuredText(sc))
	for _, info := range page.Items {
		content = append(content, resourceLink(info))
	}
	return obj{"content": content, "structuredContent": sc}, nil
}

func (s *Server) statBlob(c *call, args map[string]json.RawMessage) (obj, error) {
	key, bad := argString(args, "key", true)
	if bad != "" {
		return toolError("%s", bad), nil
	}
	info, err := s.backend.Stat(c.ctx, key)
	if err != nil {
		if r := keyError(key, err); r != nil {
			return r, nil
		}
		return nil, fmt.Errorf("mcp: stat_blob %q: %w", key, err)
	}
	sc := blobStruct(info)
	return obj{"content": []any{structuredText(sc), resourceLink(info)}, "structuredContent": sc}, nil
}

func (s *Server) deleteBlob(c *call, args map[string]json.RawMessage) (obj, error) {
	key, bad := argString(args, "key", true)
	if bad != "" {
		return toolError("%s", bad), nil
	}
	info, err := s.backend.Stat(c.ctx, key)
	if err == nil {
		err = s.backend.Delete(c.ctx, key)
	}
	if err != nil {
		if r := keyError(key, err); r != nil {
			return r, nil
		}
		return nil, fmt.Errorf("mcp: delete_blob %q: %w", key, err)
	}
	s.hub.PublishBlobChange(key)
	sc := blobStruct(info)
	sc["deleted"] = true
	// No resource_link: the blob it would name is gone.
	return obj{"content": []any{structuredText(sc)}, "structuredContent": sc}, nil
}
