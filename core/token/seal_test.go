package token

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestSeal(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	old := NewKey("old")
	kr, _ := NewKeyring(old, NewKey("new"))
	kr = kr.WithClock(func() time.Time { return now })
	c := Claims{Purpose: PurposeDownload, Principal: "alice", Object: "secret/plans.pdf", Expires: now.Add(time.Minute), SingleUse: true}
	s, err := kr.Seal(c)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(s, "~new.") || strings.ContainsAny(s, "/+=") {
		t.Fatalf("sealed token %q", s)
	}
	for _, leak := range []string{"secret", "plans", "alice", "c2VjcmV0", "YWxpY2U"} {
		if strings.Contains(s, leak) {
			t.Fatalf("sealed token %q reveals %q", s, leak)
		}
	}
	got, err := kr.Verify(s, PurposeDownload)
	if err != nil || got.Object != c.Object || got.Principal != "alice" || !got.SingleUse || got.KeyID != "new" || got.Nonce == "" || !got.Expires.Equal(c.Expires) {
		t.Fatalf("Verify(sealed) = %+v, %v", got, err)
	}
	if _, err := kr.Verify(s, PurposeUpload); !errors.Is(err, ErrWrongPurpose) {
		t.Errorf("wrong purpose: %v", err)
	}
	later := kr.WithClock(func() time.Time { return now.Add(time.Hour) })
	if _, err := later.Verify(s, PurposeDownload); !errors.Is(err, ErrExpired) {
		t.Errorf("expired: %v", err)
	}
	// Rotation: sealed with the old key, verified by a ring that still has it.
	oldRing, _ := NewKeyring(old)
	s2, _ := oldRing.Seal(Claims{Purpose: "x"})
	if _, err := kr.Verify(s2, "x"); err != nil {
		t.Errorf("rotation: %v", err)
	}
	other, _ := NewKeyring(Key{ID: "new", Secret: NewKey("z").Secret})
	if _, err := other.Verify(s, PurposeDownload); !errors.Is(err, ErrBadSignature) {
		t.Errorf("other secret, same kid: %v", err)
	}
	// Every single-character change is rejected as malformed or bad signature.
	for i := 1; i < len(s); i++ {
		b := []byte(s)
		b[i] ^= 0x01
		_, err := kr.Verify(string(b), PurposeDownload)
		if !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrBadSignature) {
			t.Fatalf("tampered at %d: %v", i, err)
		}
	}
	for _, bad := range []string{"~", "~new", "~new.", "~.abc", "~new.AAAA", "~nokey." + strings.Repeat("A", 60)} {
		if _, err := kr.Verify(bad, PurposeDownload); !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrBadSignature) {
			t.Errorf("Verify(%q) = %v", bad, err)
		}
	}
}
