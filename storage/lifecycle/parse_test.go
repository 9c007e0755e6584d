package lifecycle

import (
	"strings"
	"testing"
	"time"
)

func TestParseRules(t *testing.T) {
	rules, err := ParseRules("uploads/=7d, tmp/=36h,cache=90m")
	if err != nil {
		t.Fatal(err)
	}
	want := []Rule{{"uploads/", 7 * 24 * time.Hour}, {"tmp/", 36 * time.Hour}, {"cache", 90 * time.Minute}}
	if len(rules) != len(want) {
		t.Fatalf("ParseRules = %v, want %v", rules, want)
	}
	for i := range want {
		if rules[i] != want[i] {
			t.Errorf("rule %d = %v, want %v", i, rules[i], want[i])
		}
	}
	for in, phrase := range map[string]string{
		"uploads/":          "want prefix=age",
		"=7d":               "prefix is empty",
		"/abs/=7d":          "not the start of a valid key",
		"a/../b=7d":         "not the start of a valid key",
		".mcpblob/x/=1h":    "not the start of a valid key",
		"uploads/=0d":       "whole number of days",
		"uploads/=7x":       "want days",
		"uploads/=100ms":    "outside 1s to 10 years",
		"uploads/=4000d":    "whole number of days from 1 to 3650",
		"uploads/=-1h":      "outside",
		"uploads/=7d,,x=1h": "want prefix=age",
	} {
		if _, err := ParseRules(in); err == nil || !strings.Contains(err.Error(), phrase) {
			t.Errorf("ParseRules(%q) = %v, want an error with %q", in, err, phrase)
		}
	}
	if r, err := ParseRules("  "); err != nil || r != nil {
		t.Errorf("ParseRules of nothing = %v, %v", r, err)
	}
}
