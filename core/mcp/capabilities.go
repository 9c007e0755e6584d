package mcp

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"
	"strconv"

	"github.com/mcpblob/mcpblob/core/mcp/jsonrpc"
)

// What a 2025-11-25 session keeps of the client's capabilities object for
// its life: the members something reads, and of those only what is read,
// at most Limits.CapabilityBytes (a 2026-07-28 request carries its
// capabilities and the server keeps none). Readers, and what they read:
//
//   - [Call.HasCapability] (tools' Requires, [Call.Input]'s elicitation,
//     sampling and roots): whether a top-level member is present and not
//     null or false — kept for every member, as {} for an object and true
//     for any other value;
//   - elicitation (core/blobs picks the upload mode): which of form, url
//     and binary are present, and binary.maxFileSize;
//   - resourceStreaming: maxStreamSize;
//   - extensions (the tasks extension): which ids are present and not null
//     or false.
//
// Everything else — the values of other members, experimental payloads,
// nested objects nobody reads — is dropped.

// keptCapabilities is what a server keeps of the capabilities object raw
// (nil when raw is not an object): the pruned object, or -32602 naming
// capabilities and the limit when even that is larger than
// Limits.CapabilityBytes.
func (s *Server) keptCapabilities(raw json.RawMessage) (json.RawMessage, *Error) {
	if len(raw) == 0 || raw[0] != '{' {
		return nil, nil
	}
	kept := pruneCapabilities(raw)
	if limit := s.opts.Limits.CapabilityBytes; limit > 0 && int64(len(kept)) > limit {
		return nil, jsonrpc.NewError(CodeInvalidParams,
			"Invalid params: capabilities: the members this server reads take "+strconv.Itoa(len(kept))+
				" bytes; at most "+strconv.FormatInt(limit, 10)+" are kept",
			Object{"param": "capabilities", "limit": "capability_bytes", "max": limit})
	}
	return kept, nil
}

// pruneCapabilities returns the members of the capabilities object raw
// that the server reads (see above), in a canonical order; nil when raw is
// not an object.
func pruneCapabilities(raw json.RawMessage) json.RawMessage {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return nil
	}
	out := Object{}
	for name, v := range m {
		if absent(v) {
			continue
		}
		if !isObject(v) {
			out[name] = true
			continue
		}
		switch name {
		case "elicitation":
			out[name] = pruneMembers(v, map[string]string{"form": "", "url": "", "binary": "maxFileSize"}, true)
		case "resourceStreaming":
			// A maxStreamSize that is no number makes the member unreadable
			// (streamingCap): true keeps it so.
			if kept, ok := keepNumber(v, "maxStreamSize"); ok {
				out[name] = kept
			} else {
				out[name] = true
			}
		case "extensions":
			out[name] = pruneMembers(v, nil, false)
		default:
			out[name] = Object{}
		}
	}
	b, err := json.Marshal(out)
	if err != nil {
		panic("bug: pruned capabilities do not marshal")
	}
	return b
}

// pruneMembers keeps the members of object v as {}: those named in only
// (every one when only is nil), each with its number member only[name]
// when not "". keepNull keeps members whose value is null or false (a
// reader that asks only whether the name is present).
func pruneMembers(v json.RawMessage, only map[string]string, keepNull bool) Object {
	var m map[string]json.RawMessage
	_ = json.Unmarshal(v, &m)
	out := Object{}
	for _, name := range slices.Sorted(maps.Keys(m)) {
		num, ok := only[name]
		if only != nil && !ok || !keepNull && absent(m[name]) {
			continue
		}
		if num != "" && isObject(m[name]) {
			out[name], _ = keepNumber(m[name], num)
		} else {
			out[name] = Object{}
		}
	}
	return out
}

// keepNumber is object v reduced to its member name when that is a
// number, else to {}; ok is false when the member is there but no number.
func keepNumber(v json.RawMessage, name string) (kept Object, ok bool) {
	var m map[string]json.RawMessage
	_ = json.Unmarshal(v, &m)
	raw, present := m[name]
	if !present || string(bytes.TrimSpace(raw)) == "null" {
		return Object{}, true
	}
	var n json.Number
	if raw = bytes.TrimSpace(raw); raw[0] != '"' && json.Unmarshal(raw, &n) == nil {
		return Object{name: n}, true
	}
	return Object{}, false
}

// absent reports a member value that reads as not declared: null or false.
func absent(v json.RawMessage) bool {
	v = bytes.TrimSpace(v)
	return string(v) == "null" || string(v) == "false"
}

func isObject(v json.RawMessage) bool {
	v = bytes.TrimSpace(v)
	return len(v) > 0 && v[0] == '{'
}
