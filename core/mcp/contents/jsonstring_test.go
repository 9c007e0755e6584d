package contents

import (
	"encoding/json"
	"testing"
)

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
