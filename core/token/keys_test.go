package token

import (
	"bytes"
	"strings"
	"testing"
)

func TestParseKeys(t *testing.T) {
	a, b := NewKey("a"), NewKey("b")
	keys, err := ParseKeys([]byte("# comment\n\n" + FormatKey(a) + "  " + FormatKey(b)))
	if err != nil || len(keys) != 2 || keys[1].ID != "b" || !bytes.Equal(keys[0].Secret, a.Secret) {
		t.Fatalf("ParseKeys = %v, %v", keys, err)
	}
	for _, bad := range []string{"", "# only a comment\n", "nospace\n", "id !!!\n"} {
		if _, err := ParseKeys([]byte(bad)); err == nil || !strings.HasPrefix(err.Error(), "token: keys") {
			t.Errorf("ParseKeys(%q) error = %v", bad, err)
		}
	}
}
