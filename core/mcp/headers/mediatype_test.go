package headers

import (
	"mime"
	"testing"
)

// TestIsJSONMediaType: the exact value is taken without parsing, and every
// value gets the answer parsing gives.
func TestIsJSONMediaType(t *testing.T) {
	for _, ct := range []string{"application/json", "Application/JSON; charset=utf-8", "application/json ;x=y", "",
		"text/plain", "application/json-seq", "application/json;", "application/json; =bad"} {
		mt, _, err := mime.ParseMediaType(ct)
		if got, want := IsJSONMediaType(ct), err == nil && mt == "application/json"; got != want {
			t.Errorf("IsJSONMediaType(%q) = %v, want %v", ct, got, want)
		}
	}
	if !IsJSONMediaType("application/json") || IsJSONMediaType("text/plain") {
		t.Error("the plain values are misjudged")
	}
}
