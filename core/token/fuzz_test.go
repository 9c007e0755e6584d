package token

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// FuzzVerify feeds Verify arbitrary strings next to two genuine tokens (one
// signed, one sealed). It must never panic; whatever it accepts must carry
// exactly the minted claims (anything else is a forgery) and be spelled in
// canonical base64url (a second spelling of one token would defeat
// bookkeeping keyed by the token string, and caches).
func FuzzVerify(f *testing.F) {
	kr, err := NewKeyring(Key{ID: "k1", Secret: bytes.Repeat([]byte{1}, 32)})
	if err != nil {
		f.Fatal(err)
	}
	want := Claims{Purpose: PurposeUpload, Principal: "p", Object: "a/b", Nonce: "n1", Expires: time.Unix(4102444800, 0)}
	signed, err := kr.Sign(want)
	if err != nil {
		f.Fatal(err)
	}
	sealed, err := kr.Seal(want)
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{signed, sealed, "", ".", "~", "~k1.", "a.b", signed + "A", sealed[:len(sealed)-1]} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := kr.Verify(s, PurposeUpload)
		if err != nil {
			return
		}
		if c.Principal != want.Principal || c.Object != want.Object || c.Nonce != want.Nonce || !c.Expires.Equal(want.Expires) {
			t.Fatalf("Verify accepted %q with claims %+v; the keyring minted %+v", s, c, want)
		}
		parts := strings.Split(s, ".")
		if strings.HasPrefix(s, sealPrefix) {
			parts = parts[1:] // the key id is not base64
		}
		for _, part := range parts {
			if b, err := b64.DecodeString(part); err == nil && b64.EncodeToString(b) != part {
				t.Fatalf("Verify accepted %q: %q is not canonical base64url", s, part)
			}
		}
	})
}

// FuzzParseKeys: ParseKeys never panics, and what it accepts formats back
// to lines it parses to the same keys.
func FuzzParseKeys(f *testing.F) {
	f.Add([]byte("k1 AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE\n"))
	f.Add([]byte("# comment\n\nk1 AQID\nk2 BAUG\n"))
	f.Add([]byte("k1\n"))
	f.Add([]byte("k1 !!!\n"))
	f.Fuzz(func(t *testing.T, raw []byte) {
		keys, err := ParseKeys(raw)
		if err != nil {
			return
		}
		var again []byte
		for _, k := range keys {
			again = append(again, FormatKey(k)...)
		}
		back, err := ParseKeys(again)
		if err != nil || len(back) != len(keys) {
			t.Fatalf("formatted keys do not parse back: %v (%d of %d)", err, len(back), len(keys))
		}
		for i := range keys {
			if back[i].ID != keys[i].ID || !bytes.Equal(back[i].Secret, keys[i].Secret) {
				t.Fatalf("key %d: %q/%x parsed back as %q/%x", i, keys[i].ID, keys[i].Secret, back[i].ID, back[i].Secret)
			}
		}
	})
}
