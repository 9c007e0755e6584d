package fileargs

import "testing"

// Only answers that can carry a form request are looked at: every
// 2025-11-25 stream but initialize's and ping's; in 2026-07-28, the
// retryable methods' answers (input_required) alone.
func TestMayAsk(t *testing.T) {
	for _, tc := range []struct {
		modern bool
		method string
		want   bool
	}{
		{false, "tools/call", true}, {false, "tools/list", true}, {false, "GET", true}, {false, "", true},
		{false, "initialize", false}, {false, "ping", false},
		{true, "tools/call", true}, {true, "resources/read", true}, {true, "prompts/get", true},
		{true, "tools/list", false}, {true, "server/discover", false}, {true, "resources/list", false},
	} {
		if got := MayAsk(tc.modern, tc.method); got != tc.want {
			t.Errorf("MayAsk(%v, %q) = %v, want %v", tc.modern, tc.method, got, tc.want)
		}
	}
}
