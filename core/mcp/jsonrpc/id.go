package jsonrpc

import (
	"encoding/json"
	"strconv"
)

// validID reports whether id is a string or an integer, the ids MCP allows.
func validID(id json.RawMessage) bool {
	if len(id) == 0 {
		return false
	}
	switch id[0] {
	case '"':
		return true
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		_, err := strconv.ParseInt(string(id), 10, 64)
		return err == nil
	}
	return false
}

// IDKey is a comparable key for a message id, so an answer finds its
// request: a string id and an integer id of the same digits stay distinct,
// an integer is keyed by its value, anything else by its bytes.
func IDKey(id json.RawMessage) string {
	if len(id) > 0 && id[0] == '"' {
		var s string
		if json.Unmarshal(id, &s) == nil {
			return "s:" + s
		}
	}
	if n, err := strconv.ParseInt(string(id), 10, 64); err == nil {
		return "n:" + strconv.FormatInt(n, 10)
	}
	return "r:" + string(id)
}
