package clientcaps

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"
)

// object is a JSON object being built.
type object = map[string]any

// Prune returns the members of the capabilities object raw that the
// server reads (see the package doc), in a canonical order (members
// sorted); nil when raw is not an object.
func Prune(raw json.RawMessage) json.RawMessage {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return nil
	}
	out := object{}
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
			// (package mcp reads it as an int64): true keeps it so.
			if kept, ok := keepNumber(v, "maxStreamSize"); ok {
				out[name] = kept
			} else {
				out[name] = true
			}
		case "extensions":
			out[name] = pruneMembers(v, nil, false)
		default:
			out[name] = object{}
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
func pruneMembers(v json.RawMessage, only map[string]string, keepNull bool) object {
	var m map[string]json.RawMessage
	_ = json.Unmarshal(v, &m)
	out := object{}
	for _, name := range slices.Sorted(maps.Keys(m)) {
		num, ok := only[name]
		if only != nil && !ok || !keepNull && absent(m[name]) {
			continue
		}
		if num != "" && isObject(m[name]) {
			out[name], _ = keepNumber(m[name], num)
		} else {
			out[name] = object{}
		}
	}
	return out
}

// keepNumber is object v reduced to its member name when that is a
// number, else to {}; ok is false when the member is there but no number.
func keepNumber(v json.RawMessage, name string) (kept object, ok bool) {
	var m map[string]json.RawMessage
	_ = json.Unmarshal(v, &m)
	raw, present := m[name]
	if !present || string(bytes.TrimSpace(raw)) == "null" {
		return object{}, true
	}
	var n json.Number
	if raw = bytes.TrimSpace(raw); raw[0] != '"' && json.Unmarshal(raw, &n) == nil {
		return object{name: n}, true
	}
	return object{}, false
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
