package mcp

import (
	"encoding/json"
	"mime"
	"testing"
)

// TestIsJSONMediaType: the exact value is taken without parsing, and every
// value gets the answer parsing gives.
func TestIsJSONMediaType(t *testing.T) {
	for _, ct := range []string{"application/json", "Application/JSON; charset=utf-8", "application/json ;x=y", "",
		"text/plain", "application/json-seq", "application/json;", "application/json; =bad"} {
		mt, _, err := mime.ParseMediaType(ct)
		if got, want := isJSONMediaType(ct), err == nil && mt == "application/json"; got != want {
			t.Errorf("isJSONMediaType(%q) = %v, want %v", ct, got, want)
		}
	}
	if !isJSONMediaType("application/json") || isJSONMediaType("text/plain") {
		t.Error("the plain values are misjudged")
	}
}

// TestAppendJSONStringMatchesMarshal: the copied plain strings and the
// ones handed to json.Marshal come out as json.Marshal writes them.
func TestAppendJSONStringMatchesMarshal(t *testing.T) {
	for _, s := range []string{"", "blob:///bench/4k.bin", "application/octet-stream", `a"b`, `a\b`, "<x>&", "é",
		"\x7f", "\x00\n", "\xff", "\u2028", "text/plain; charset=utf-8"} {
		want, _ := json.Marshal(s)
		if got := appendJSONString([]byte("p"), s); string(got) != "p"+string(want) {
			t.Errorf("appendJSONString(%q) = %s, want p%s", s, got, want)
		}
	}
}
