package toolargs

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mcpblob/mcpblob/core/mcp/scan"
)

const schema = `{"type":"object","properties":{
	"title":{"type":"string","minLength":1,"maxLength":10},
	"count":{"type":"integer","minimum":1,"maximum":100},
	"tags":{"type":"array","items":{"type":"string","maxLength":3}},
	"pin":{"type":"boolean"},
	"file":{"type":"string","x-mcp-file":{}}},
	"required":["title"],"additionalProperties":false}`

// FuzzArgRules: the argument checks never panic, and a value they pass has
// the schema's type and bounds.
func FuzzArgRules(f *testing.F) {
	for _, s := range []string{`"k"`, `""`, `60`, `1e99`, `true`, `null`, `["a",""]`, `{"a":1}`, `"` + strings.Repeat("x", 300) + `"`} {
		f.Add(s)
	}
	rules, err := Parse("note", json.RawMessage(schema))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		if !json.Valid([]byte(raw)) {
			return
		}
		raw = strings.Trim(raw, " \t\r\n") // as the scanner hands members over
		for name, p := range rules.props {
			if p.File != nil || p.check(nil, name, json.RawMessage(raw)) != "" || raw == "null" {
				continue
			}
			var v any
			_ = json.Unmarshal([]byte(raw), &v)
			switch s, isStr := v.(string); p.Type {
			case "string":
				if !isStr || (p.MaxLength != nil && utf8.RuneCountInString(s) > *p.MaxLength) || (p.MinLength != nil && utf8.RuneCountInString(s) < *p.MinLength) {
					t.Fatalf("%s accepted %s", name, raw)
				}
			case "integer":
				if _, ok := scan.Integer(json.RawMessage(raw), p.min(), p.max()); !ok {
					t.Fatalf("%s accepted %s", name, raw)
				}
			case "boolean":
				if _, isBool := v.(bool); !isBool {
					t.Fatalf("%s accepted %s", name, raw)
				}
			}
		}
	})
}
