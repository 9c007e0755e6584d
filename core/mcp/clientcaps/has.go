package clientcaps

import "encoding/json"

// Has reports whether the capabilities object caps declares name: present,
// and neither null nor false.
func Has(caps json.RawMessage, name string) bool {
	var m map[string]json.RawMessage
	if json.Unmarshal(caps, &m) != nil {
		return false
	}
	v, ok := m[name]
	return ok && string(v) != "null" && string(v) != "false"
}

// HasExtension reports whether caps lists extension id under extensions,
// neither null nor false.
func HasExtension(caps json.RawMessage, id string) bool {
	var c struct {
		Extensions json.RawMessage `json:"extensions"`
	}
	return json.Unmarshal(caps, &c) == nil && Has(c.Extensions, id)
}
