package tus

import (
	"encoding/base64"
	"strings"
	"testing"
)

func TestParseMetadata(t *testing.T) {
	good := map[string]map[string]string{
		"":                                      {},
		"filename d29ybGQuanBn,is_confidential": {"filename": "world.jpg", "is_confidential": ""},
		"a YQ==, b Yg==":                        {"a": "a", "b": "b"},
	}
	for h, want := range good {
		got, err := ParseMetadata(h)
		if err != nil || len(got) != len(want) {
			t.Errorf("ParseMetadata(%q) = %v, %v; want %v", h, got, err, want)
			continue
		}
		for k, v := range want {
			if got[k] != v {
				t.Errorf("ParseMetadata(%q)[%q] = %q, want %q", h, k, got[k], v)
			}
		}
	}
	for _, h := range []string{"a !!!", "a YQ==,a Yg==", " ", ",", "a  YQ==", "a YQ", "k " + base64.StdEncoding.EncodeToString([]byte("x\ny")),
		"k\x01 YQ==", strings.Repeat("a,", 70), strings.Repeat("a", 9000)} {
		if md, err := ParseMetadata(h); err == nil {
			t.Errorf("ParseMetadata(%q) = %v; want an error", h, md)
		}
	}
}

func TestParseSize(t *testing.T) {
	for s, want := range map[string]int64{"0": 0, "42": 42, "999999999999999999": 999999999999999999} {
		if n, ok := ParseSize(s); !ok || n != want {
			t.Errorf("ParseSize(%q) = %d, %v", s, n, ok)
		}
	}
	for _, s := range []string{"", "-1", "+1", " 1", "1 ", "0x10", "1e3", "9999999999999999999"} {
		if _, ok := ParseSize(s); ok {
			t.Errorf("ParseSize(%q) ok; want refused", s)
		}
	}
}

func TestParseConcat(t *testing.T) {
	id1, id2 := "AAAAAAAAAAAAAAAAAAAAAAAAAA", "BBBBBBBBBBBBBBBBBBBBBBBBBB"
	partial, ids, err := ParseConcat("final;/v1/tus/"+id1+" https://h/v1/tus/"+id2, "/v1/tus/")
	if err != nil || partial || len(ids) != 2 || ids[0] != id1 || ids[1] != id2 {
		t.Fatalf("ParseConcat = %v, %v, %v", partial, ids, err)
	}
	for _, h := range []string{"final;", "final", "partial ", "final;/v1/other/" + id1, "final;/v1/tus/short", "final;/v1/tus/" + id1 + "/x"} {
		if _, _, err := ParseConcat(h, "/v1/tus/"); err == nil {
			t.Errorf("ParseConcat(%q) succeeded", h)
		}
	}
}

// FuzzParseMetadata: any header parses or fails without panicking, and
// what parses has keys and values that obey the rules.
func FuzzParseMetadata(f *testing.F) {
	for _, s := range []string{"", "a YQ==", "filename d29ybGQuanBn,is_confidential", "a !!!", "a YQ==,a Yg=="} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, h string) {
		md, err := ParseMetadata(h)
		if err != nil {
			return
		}
		for k, v := range md {
			if !metadataKey(k) || strings.ContainsFunc(v, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
				t.Fatalf("ParseMetadata(%q) gave %q=%q", h, k, v)
			}
		}
	})
}

// FuzzParseHeaders: the other parsers of client bytes never panic, and
// what they accept has the promised form.
func FuzzParseHeaders(f *testing.F) {
	for _, s := range []string{"0", "123", "-1", "sha1 AAAAAAAAAAAAAAAAAAAAAAAAAAA=", "final;/v1/tus/AAAAAAAAAAAAAAAAAAAAAAAAAA", "partial"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, h string) {
		if n, ok := ParseSize(h); ok && n < 0 {
			t.Fatalf("ParseSize(%q) = %d", h, n)
		}
		if c, err := ParseChecksum(h); err == nil && len(c.Digest) != digestLen[c.Algorithm] {
			t.Fatalf("ParseChecksum(%q) = %+v", h, c)
		}
		if _, ids, err := ParseConcat(h, "/v1/tus/"); err == nil {
			for _, id := range ids {
				if !ValidID(id) {
					t.Fatalf("ParseConcat(%q) gave id %q", h, id)
				}
			}
		}
	})
}
