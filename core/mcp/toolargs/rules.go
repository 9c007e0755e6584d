package toolargs

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/mcpblob/mcpblob/core/mcp/scan"
)

// Rules are one tool's argument checks, read from its input schema.
type Rules struct {
	tool     string
	props    map[string]*propRule
	names    []string // sorted, for messages
	closed   bool     // additionalProperties: false
	required []string
}

// propRule is the schema of one argument.
type propRule struct {
	Type      string          `json:"type"`
	MinLength *int            `json:"minLength"`
	MaxLength *int            `json:"maxLength"`
	Minimum   *int64          `json:"minimum"`
	Maximum   *int64          `json:"maximum"`
	Enum      []string        `json:"enum"`
	Items     *propRule       `json:"items"`
	File      json.RawMessage `json:"x-mcp-file"`
}

// Parse reads the checks of tool's arguments from its input schema.
func Parse(tool string, schema json.RawMessage) (*Rules, error) {
	var s struct {
		Properties map[string]*propRule `json:"properties"`
		Additional *bool                `json:"additionalProperties"`
		Required   []string             `json:"required"`
	}
	if err := json.Unmarshal(schema, &s); err != nil {
		return nil, err
	}
	return &Rules{tool: tool, props: s.Properties, names: slices.Sorted(maps.Keys(s.Properties)),
		closed: s.Additional != nil && !*s.Additional, required: s.Required}, nil
}

// Check returns the problem with args, naming the argument, or "".
// diverted reports a string argument taken out of the message while it
// arrived (over 64 KiB), which args read as "".
func (r *Rules) Check(args map[string]json.RawMessage, diverted func(name string) bool) string {
	for _, name := range slices.Sorted(maps.Keys(args)) {
		p := r.props[name]
		if p == nil {
			if r.closed {
				return fmt.Sprintf("Argument %q is not an argument of %s (it takes %s)", name, r.tool, strings.Join(r.names, ", "))
			}
			continue
		}
		if bad := p.check(diverted, name, args[name]); bad != "" {
			return bad
		}
	}
	for _, name := range r.required {
		if raw, ok := args[name]; !ok || string(raw) == "null" {
			return fmt.Sprintf("Argument %q is required", name)
		}
	}
	return ""
}

// check returns the problem with the value raw of argument name, or "".
// null stands for an absent argument.
func (p *propRule) check(diverted func(string) bool, name string, raw json.RawMessage) string {
	if string(raw) == "null" || p.File != nil {
		return ""
	}
	switch p.Type {
	case "string":
		var v string
		if json.Unmarshal(raw, &v) != nil {
			return fmt.Sprintf("Argument %q must be a string", name)
		}
		if v == "" && diverted != nil && diverted(name) {
			// Over 64 KiB: the scanner took it out of the message.
			return p.lengthProblem(name)
		}
		return p.checkString(name, v)
	case "integer":
		if _, ok := scan.Integer(raw, p.min(), p.max()); !ok {
			return p.integerProblem(name)
		}
	case "boolean":
		if string(raw) != "true" && string(raw) != "false" {
			return fmt.Sprintf("Argument %q must be a boolean", name)
		}
	case "array":
		var items []json.RawMessage
		if json.Unmarshal(raw, &items) != nil {
			return fmt.Sprintf("Argument %q must be an array", name)
		}
		for i, item := range items {
			if p.Items == nil {
				break
			}
			if bad := p.Items.check(nil, fmt.Sprintf("%s[%d]", name, i), item); bad != "" {
				return bad
			}
		}
	}
	return ""
}

func (p *propRule) checkString(name, v string) string {
	n := utf8.RuneCountInString(v)
	switch {
	case p.MaxLength != nil && n > *p.MaxLength:
		return p.lengthProblem(name)
	case p.MinLength != nil && n < *p.MinLength:
		if *p.MinLength == 1 {
			return fmt.Sprintf("Argument %q must not be empty", name)
		}
		return fmt.Sprintf("Argument %q must be at least %d characters long", name, *p.MinLength)
	case len(p.Enum) > 0 && !slices.Contains(p.Enum, v):
		return fmt.Sprintf("Argument %q must be one of %s", name, strings.Join(p.Enum, ", "))
	}
	return ""
}

func (p *propRule) lengthProblem(name string) string {
	if p.MaxLength == nil {
		return fmt.Sprintf("Argument %q is too long", name)
	}
	return fmt.Sprintf("Argument %q must be at most %d characters long", name, *p.MaxLength)
}

func (p *propRule) min() int64 {
	if p.Minimum != nil {
		return *p.Minimum
	}
	return -1 << 63
}

func (p *propRule) max() int64 {
	if p.Maximum != nil {
		return *p.Maximum
	}
	return 1<<63 - 1
}

func (p *propRule) integerProblem(name string) string {
	switch {
	case p.Minimum != nil && p.Maximum != nil:
		return fmt.Sprintf("Argument %q must be an integer in [%d, %d]", name, *p.Minimum, *p.Maximum)
	case p.Minimum != nil:
		return fmt.Sprintf("Argument %q must be an integer of at least %d", name, *p.Minimum)
	}
	return fmt.Sprintf("Argument %q must be an integer", name)
}
