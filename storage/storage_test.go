package storage

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestValidateKey(t *testing.T) {
	valid := []string{"a", "a/b/c.txt", ".hidden", "a/.b", "..x/y..", "x.", "ünï/日本", ".mcpblobx", "x/.mcpblob",
		strings.Repeat("k", MaxKeyLen)}
	for _, key := range valid {
		if err := ValidateKey(key); err != nil {
			t.Errorf("ValidateKey(%q) = %v, want nil", key, err)
		}
	}
	invalid := []string{"", ".", "..", "a/..", "../a", "a/./b", "/a", "a/", "a//b", "a\x00", "a\x1fb", "a\x7f",
		`a\b`, "\xff", strings.Repeat("k", MaxKeyLen+1), ReservedDir, ReservedDir + "/x",
		".MCPBLOB/x", ".McpBlob", ".mcpBLOB/claims/links/x"}
	for _, key := range invalid {
		err := ValidateKey(key)
		if !errors.Is(err, ErrInvalidKey) {
			t.Errorf("ValidateKey(%q) = %v, want ErrInvalidKey", key, err)
		}
	}
}

func TestKeyError(t *testing.T) {
	err := ValidateKey("a/../b")
	var ke *KeyError
	if !errors.As(err, &ke) || ke.Key != "a/../b" || KeyReason(err) != `contains a ".." segment` ||
		err.Error() != `storage: invalid key "a/../b": contains a ".." segment` {
		t.Fatalf("ValidateKey: %#v", err)
	}
	cause := errors.New("statat x: file name too long")
	wrapped := fmt.Errorf("localfs: stat: %w", &KeyError{Reason: "too long", Err: cause})
	if !errors.Is(wrapped, ErrInvalidKey) || !errors.Is(wrapped, cause) || KeyReason(wrapped) != "too long" ||
		strings.Contains((&KeyError{Reason: "too long", Err: cause}).Error(), "statat") {
		t.Errorf("KeyError with a cause: %v", wrapped)
	}
	if KeyReason(ErrInvalidKey) != "" || KeyReason(nil) != "" {
		t.Error("KeyReason of a bare sentinel or nil is not empty")
	}
	if got := TruncateKey(strings.Repeat("k", 100)); got != strings.Repeat("k", 64)+"…" {
		t.Errorf("TruncateKey: %q", got)
	}
}

func TestRangeClip(t *testing.T) {
	cases := []struct {
		r         Range
		size      int64
		off, n    int64
		wantError bool
	}{
		{Range{0, -1}, 10, 0, 10, false},
		{Range{3, 4}, 10, 3, 4, false},
		{Range{3, 100}, 10, 3, 7, false},
		{Range{9, -1}, 10, 9, 1, false},
		{Range{5, 0}, 10, 5, 0, false},
		{Range{10, 1}, 10, 0, 0, true},
		{Range{-1, 1}, 10, 0, 0, true},
		{Range{0, -1}, 0, 0, 0, false},
		{Range{7, 3}, 0, 0, 0, false},
		{Range{-1, 3}, 0, 0, 0, true},
	}
	for _, c := range cases {
		off, n, err := c.r.Clip(c.size)
		if c.wantError {
			if !errors.Is(err, ErrInvalidRange) {
				t.Errorf("%+v.Clip(%d) error = %v, want ErrInvalidRange", c.r, c.size, err)
			}
			continue
		}
		if err != nil || off != c.off || n != c.n {
			t.Errorf("%+v.Clip(%d) = %d, %d, %v; want %d, %d", c.r, c.size, off, n, err, c.off, c.n)
		}
	}
}

func TestCreateOptionsNormalize(t *testing.T) {
	o, err := CreateOptions{Filename: "f"}.Normalize()
	if err != nil || o.MediaType != DefaultMediaType || o.Filename != "f" {
		t.Errorf("Normalize of zero options = %+v, %v", o, err)
	}
	o, err = CreateOptions{MediaType: "text/plain; charset=utf-8", Size: 10, MaxSize: 10}.Normalize()
	if err != nil || o.MediaType != "text/plain; charset=utf-8" {
		t.Errorf("Normalize = %+v, %v", o, err)
	}
	if _, err := (CreateOptions{Size: 11, MaxSize: 10}).Normalize(); !errors.Is(err, ErrTooLarge) {
		t.Errorf("Size above MaxSize: %v, want ErrTooLarge", err)
	}
	for _, bad := range []CreateOptions{{Size: -1}, {MaxSize: -1}, {MediaType: "text/plain\r\nX-Evil: 1"}} {
		if _, err := bad.Normalize(); err == nil {
			t.Errorf("Normalize(%+v) succeeded", bad)
		}
	}
}

// FuzzValidateKey: ValidateKey never panics, and every key it accepts keeps
// the rules backends rely on to map keys onto paths safely.
func FuzzValidateKey(f *testing.F) {
	for _, s := range []string{"a/b", "../x", ".MCPBLOB/x", "a//b", "a\\b", "ünï/日本", "a/./b", "x\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, key string) {
		if ValidateKey(key) != nil {
			return
		}
		segs := strings.Split(key, "/")
		if !utf8.ValidString(key) || len(key) > MaxKeyLen || strings.EqualFold(segs[0], ReservedDir) {
			t.Fatalf("accepted %q: invalid UTF-8, too long or reserved", key)
		}
		for _, seg := range segs {
			if seg == "" || seg == "." || seg == ".." || strings.ContainsAny(seg, "\\\x00") {
				t.Fatalf("accepted %q: segment %q", key, seg)
			}
		}
		if strings.ContainsFunc(key, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
			t.Fatalf("accepted %q: control character", key)
		}
	})
}
