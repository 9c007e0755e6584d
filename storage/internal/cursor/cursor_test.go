package cursor

import (
	"errors"
	"testing"

	"github.com/mcpblob/mcpblob/storage"
)

func TestRoundTrip(t *testing.T) {
	for _, key := range []string{"a", "dir/sub/file.txt", "résumé.pdf", "a b+c=d"} {
		got, err := Decode(Encode(key))
		if err != nil || got != key {
			t.Errorf("Decode(Encode(%q)) = %q, %v", key, got, err)
		}
	}
	if got, err := Decode(""); got != "" || err != nil {
		t.Errorf(`Decode("") = %q, %v`, got, err)
	}
}

func TestInvalid(t *testing.T) {
	for _, c := range []string{"!!!", "YQ==", Encode("../x"), Encode("a//b"), Encode(".mcpblob/tmp/x"), Encode("\x00")} {
		if _, err := Decode(c); !errors.Is(err, storage.ErrInvalidCursor) {
			t.Errorf("Decode(%q) error = %v, want ErrInvalidCursor", c, err)
		}
	}
}
