package principal

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestSignVerify(t *testing.T) {
	key := bytes.Repeat([]byte{7}, MinKeyLen)
	now := time.Unix(1_800_000_000, 0)
	for _, p := range []string{"alice", "", "user@example.com", "日本.語", "a.b.c"} {
		v := Sign(key, p, now.Add(time.Minute))
		got, err := Verify(key, v, now)
		if err != nil || got != p {
			t.Fatalf("Verify(Sign(%q)) = %q, %v", p, got, err)
		}
	}
	v := Sign(key, "alice", now.Add(time.Minute))
	cases := []struct {
		name  string
		key   []byte
		value string
		now   time.Time
		want  error
	}{
		{"expired", key, v, now.Add(time.Minute), ErrExpired},
		{"other key", bytes.Repeat([]byte{8}, MinKeyLen), v, now, ErrSignature},
		{"principal changed", key, strings.Replace(v, "YWxpY2U", "Ym9i", 1), now, ErrSignature},
		{"expiry changed", key, strings.Replace(v, ".18000000", ".19000000", 1), now, ErrSignature},
		{"no signature", key, "v1.YWxpY2U.1800000060", now, ErrMalformed},
		{"other version", key, "v2" + v[2:], now, ErrMalformed},
		{"empty", key, "", now, ErrMalformed},
	}
	for _, c := range cases {
		if _, err := Verify(c.key, c.value, c.now); !errors.Is(err, c.want) {
			t.Errorf("%s: err = %v, want %v", c.name, err, c.want)
		}
	}
}

func TestPlain(t *testing.T) {
	for in, want := range map[string]string{
		"alice":        "alice",
		"b64:x":        "b64:YjY0Ong",
		" alice":       "b64:IGFsaWNl",
		"a\r\nX-Evil:": "b64:YQ0KWC1FdmlsOg",
		"日本":           "b64:5pel5pys",
	} {
		if got := Plain(in); got != want {
			t.Errorf("Plain(%q) = %q, want %q", in, got, want)
		}
	}
}
