package token

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestSignVerify(t *testing.T) {
	old := NewKey("old")
	kr, err := NewKeyring(old, NewKey("new"))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1_800_000_000, 0)
	kr = kr.WithClock(func() time.Time { return now })
	c := Claims{Purpose: PurposeDownload, Principal: "alice", Object: "a/b.pdf",
		Expires: now.Add(time.Minute), MaxSize: 10, Accept: []string{"image/*"}, Data: []byte{1, 2}}
	s, err := kr.Sign(c)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range s {
		if r < 0x21 || r > 0x7e {
			t.Fatalf("token has non-visible ASCII %q", r)
		}
	}
	got, err := kr.Verify(s, PurposeDownload)
	if err != nil {
		t.Fatal(err)
	}
	if got.KeyID != "new" || got.Principal != "alice" || got.Object != "a/b.pdf" || got.Nonce == "" ||
		!got.Expires.Equal(c.Expires) || got.MaxSize != 10 || got.Accept[0] != "image/*" || got.Data[1] != 2 {
		t.Fatalf("claims = %+v", got)
	}

	// Rotation: a token signed by the old key verifies on a ring that still holds it.
	oldRing, _ := NewKeyring(old)
	s2, _ := oldRing.Sign(Claims{Purpose: "x"})
	if _, err := kr.Verify(s2, "x"); err != nil {
		t.Fatalf("rotated verify: %v", err)
	}
	// But not on a ring without it.
	other := NewRandomKeyring()
	if _, err := other.Verify(s2, "x"); !errors.Is(err, ErrBadSignature) {
		t.Fatalf("foreign key: %v", err)
	}

	if _, err := kr.Verify(s, PurposeUpload); !errors.Is(err, ErrWrongPurpose) {
		t.Fatalf("purpose: %v", err)
	}
	late := kr.WithClock(func() time.Time { return now.Add(time.Hour) })
	if _, err := late.Verify(s, PurposeDownload); !errors.Is(err, ErrExpired) {
		t.Fatalf("expiry: %v", err)
	}
	tampered := s[:len(s)/3] + string(s[len(s)/3]^1) + s[len(s)/3+1:]
	if _, err := kr.Verify(tampered, PurposeDownload); err == nil {
		t.Fatal("tampered token verified")
	}
	for _, bad := range []string{"", ".", "abc", "abc.", ".abc", "a.b.c", s + "-TAMPERED", strings.Repeat("a", maxTokenLen+1)} {
		if _, err := kr.Verify(bad, PurposeDownload); err == nil {
			t.Fatalf("Verify(%q) succeeded", bad)
		}
	}
	if _, err := kr.Verify(s+"-TAMPERED", PurposeDownload); !errors.Is(err, ErrMalformed) {
		t.Fatalf("tampered suffix: %v", err)
	}
}

func TestNewKeyringRejects(t *testing.T) {
	for _, keys := range [][]Key{nil, {{ID: "", Secret: make([]byte, 32)}}, {{ID: "a", Secret: make([]byte, 8)}},
		{NewKey("a"), NewKey("a")}} {
		if _, err := NewKeyring(keys...); err == nil {
			t.Fatalf("NewKeyring(%v) succeeded", keys)
		}
	}
	if _, err := NewRandomKeyring().Sign(Claims{}); err == nil {
		t.Fatal("sign without purpose succeeded")
	}
}
