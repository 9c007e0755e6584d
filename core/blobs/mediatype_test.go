package blobs

import (
	"mime"
	"testing"
)

// TestIsTextMediaTypeExactValues: the values answered without parsing get
// the answer parsing gives.
func TestIsTextMediaTypeExactValues(t *testing.T) {
	for mt, want := range map[string]bool{"application/octet-stream": false, "text/plain": true, "application/json": true,
		"Text/Plain; charset=utf-8": true, "application/vnd.x+json": true, "image/png": false, "bad type": false} {
		if got := isTextMediaType(mt); got != want {
			t.Errorf("isTextMediaType(%q) = %v, want %v", mt, got, want)
		}
		if _, _, err := mime.ParseMediaType(mt); err != nil && want {
			t.Errorf("%q does not parse but is text", mt)
		}
	}
}
