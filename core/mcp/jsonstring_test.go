package mcp

import "encoding/json"

// jsonString is s as a JSON string, for building expected messages.
func jsonString(s string) []byte {
	b, err := json.Marshal(s)
	if err != nil {
		panic("bug: string does not marshal")
	}
	return b
}
