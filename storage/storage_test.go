package storage

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestValidateKey(t *testing.T) {
	seg := strings.Repeat("k", MaxSegmentLen)
	valid := []string{"a", "a/b/c.txt", ".hidden", "a/.b", "..x/y..", "x.", "ünï/日本", ".mcpblobx", "x/.mcpblob",
		seg, "k/" + strings.Repeat(seg+"/", 3) + seg[:MaxKeyLen-3*MaxSegmentLen-5]}
	for _, key := range valid {
		if err := ValidateKey(key); err != nil {
			t.Errorf("ValidateKey(%q) = %v, want nil", key, err)
		}
	}
	invalid := []string{"", ".", "..", "a/..", "../a", "a/./b", "/a", "a/", "a//b", "a\x00", "a\x1fb", "a\x7f",
		`a\b`, "\xff", strings.Repeat("k", MaxKeyLen+1), seg + "k", "a/" + seg + "k/b", ReservedDir, ReservedDir + "/x",
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
			if seg == "" || seg == "." || seg == ".." || len(seg) > MaxSegmentLen || strings.ContainsAny(seg, "\\\x00") {
				t.Fatalf("accepted %q: segment %q", key, seg)
			}
		}
		if strings.ContainsFunc(key, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
			t.Fatalf("accepted %q: control character", key)
		}
	})
}

// TestKeyReasons: ValidateKey says why, segments over 255 bytes included.
func TestKeyReasons(t *testing.T) {
	for key, why := range map[string]string{
		strings.Repeat("k", 300):        "has a segment longer than 255 bytes",
		"a/" + strings.Repeat("k", 256): "has a segment longer than 255 bytes",
		"a/../b":                        `contains a ".." segment`,
		"a\r\nb":                        "contains control character U+000D",
	} {
		var ke *KeyError
		if err := ValidateKey(key); !errors.As(err, &ke) || ke.Reason != why || ke.Key != key {
			t.Errorf("ValidateKey(%.20q) = %v, want a KeyError saying %q", key, err, why)
		}
	}
}

func TestValidateFilename(t *testing.T) {
	for _, name := range []string{"", "a.txt", "résumé ü.pdf", "dir/x", strings.Repeat("é", 127) + "x", "日本.bin"} {
		if err := ValidateFilename(name); err != nil {
			t.Errorf("ValidateFilename(%q) = %v, want nil", name, err)
		}
	}
	for name, why := range map[string]string{
		"a\r\nb":                              "contains control character U+000D",
		"nul\x00":                             "contains control character U+0000",
		"c1\u0085":                            "contains control character U+0085",
		"\xff":                                "not valid UTF-8",
		strings.Repeat("f", MaxFilenameLen+1): "longer than 255 bytes",
	} {
		var fe *FilenameError
		if err := ValidateFilename(name); !errors.As(err, &fe) || !errors.Is(err, ErrInvalidFilename) || fe.Reason != why {
			t.Errorf("ValidateFilename(%.20q) = %v, want a FilenameError saying %q", name, err, why)
		}
		if _, err := (CreateOptions{Filename: name}).Normalize(); !errors.Is(err, ErrInvalidFilename) {
			t.Errorf("Normalize with filename %.20q: %v, want ErrInvalidFilename", name, err)
		}
	}
}

// FuzzValidateFilename: an accepted filename is short valid UTF-8 without
// control characters, so it fits in one header line.
func FuzzValidateFilename(f *testing.F) {
	for _, s := range []string{"a.txt", "a\r\nb", "é.pdf", "\u2028", "x\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		if ValidateFilename(name) != nil {
			return
		}
		if len(name) > MaxFilenameLen || !utf8.ValidString(name) || strings.ContainsAny(name, "\r\n\x00\x7f") {
			t.Fatalf("accepted %q", name)
		}
		for _, r := range name {
			if r < 0x20 || (r >= 0x80 && r < 0xa0) {
				t.Fatalf("accepted %q: control character %U", name, r)
			}
		}
	})
}

func TestParents(t *testing.T) {
	if got := Parents("a/b/c"); len(got) != 2 || got[0] != "a" || got[1] != "a/b" {
		t.Errorf("Parents(a/b/c) = %q", got)
	}
	if got := Parents("a"); len(got) != 0 {
		t.Errorf("Parents(a) = %q", got)
	}
}

// TestNormalizeMediaType: a media type over MaxMediaTypeLen bytes or with
// control characters is ErrInvalidMediaType (S3 answered a long one with a
// server error).
func TestNormalizeMediaType(t *testing.T) {
	for _, mt := range []string{"text/plain; x=" + strings.Repeat("a", MaxMediaTypeLen), "text/plain\r\nX: y"} {
		if _, err := (CreateOptions{MediaType: mt}).Normalize(); !errors.Is(err, ErrInvalidMediaType) {
			t.Errorf("Normalize(%.20q…) = %v; want ErrInvalidMediaType", mt, err)
		}
	}
	if _, err := (CreateOptions{MediaType: "text/plain; charset=utf-8"}).Normalize(); err != nil {
		t.Errorf("an ordinary media type: %v", err)
	}
}
