package telemetry

import "testing"

// TestMethodString: the method string is the method's bytes, common or not.
func TestMethodString(t *testing.T) {
	for _, m := range []string{"POST", "GET", "HEAD", "PATCH", "PUT", "DELETE", "OPTIONS", "PROPFIND", "post", ""} {
		if got := methodString([]byte(m)); got != m {
			t.Errorf("methodString(%q) = %q", m, got)
		}
	}
}
