package mcp

import (
	"encoding/json"
	"testing"
)

// TestEncodedResultMatchesMarshal checks that splicing a pre-encoded member
// gives the bytes json.Marshal gives for the whole object, key order
// included (golden transcripts depend on it), whatever the member's place.
func TestEncodedResultMatchesMarshal(t *testing.T) {
	t.Parallel()
	value := []any{Object{"name": "a", "x": 1}, Object{"name": "b<&>"}}
	raw, _ := json.Marshal(value)
	for _, rest := range []Object{
		{},
		{"_meta": Object{"k": "v"}},
		{"_meta": Object{"k": "v"}, "resultType": "complete", "ttlMs": 0, "zeta": true},
		{"a": 1, "z": 2},
	} {
		e := &encodedResult{name: "tools", value: raw}
		got, err := e.encode(rest)
		if err != nil {
			t.Fatal(err)
		}
		whole := Object{"tools": value}
		for k, v := range rest {
			whole[k] = v
		}
		want, _ := json.Marshal(whole)
		if string(got) != string(want) {
			t.Errorf("rest %v:\n got %s\nwant %s", rest, got, want)
		}
	}
}
