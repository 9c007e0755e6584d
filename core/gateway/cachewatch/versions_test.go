package cachewatch

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// TestWatch: the versions of a list's resources and a read's contents, in
// JSON and in SSE, read however the body is split; an answer over MaxScan
// is not looked at; the bytes pass unchanged.
func TestWatch(t *testing.T) {
	meta := `{"rev": 2}`
	sum := sha256.Sum256([]byte(meta))
	list := `{"jsonrpc":"2.0","id":1,"result":{"resources":[{"uri":"a","annotations":{"lastModified":"T1"}},` +
		`{"uri":"b","_meta":{"x":1}},{"uri":"c","annotations":{"lastModified":"T3"}}]}}`
	read := `{"jsonrpc":"2.0","id":2,"result":{"contents":[{"uri":"d","_meta":` + meta + `,"blob":"AAAA"}]}}`
	for _, tc := range []struct {
		name, body string
		sse        bool
		want       map[string]string
	}{
		{"list", list, false, map[string]string{"a": "lm:T1", "c": "lm:T3"}},
		{"read", read, false, map[string]string{"d": "meta:" + hex.EncodeToString(sum[:])}},
		{"sse", "event: message\ndata: " + read + "\r\n\r\ndata: " + list + "\n\n", true,
			map[string]string{"a": "lm:T1", "c": "lm:T3", "d": "meta:" + hex.EncodeToString(sum[:])}},
		{"over MaxScan", strings.Replace(list, `"id":1`, `"id":1,"pad":"`+strings.Repeat("x", MaxScan)+`"`, 1), false, map[string]string{}},
	} {
		got := map[string]string{}
		w := Watch(io.NopCloser(iotest.HalfReader(strings.NewReader(tc.body))), tc.sse, func(uri, v string) { got[uri] = v })
		out, err := io.ReadAll(w)
		if err != nil || string(out) != tc.body {
			t.Fatalf("%s: the bytes changed (%v)", tc.name, err)
		}
		if len(got) != len(tc.want) {
			t.Errorf("%s: saw %v, want %v", tc.name, got, tc.want)
		}
		for k, v := range tc.want {
			if got[k] != v {
				t.Errorf("%s: %s at %q, want %q", tc.name, k, got[k], v)
			}
		}
	}
}

func TestDiffers(t *testing.T) {
	for _, tc := range []struct {
		seen, stored string
		want         bool
	}{
		{"lm:T2", "lm:T1", true}, {"lm:T1", "lm:T1", false}, {"meta:ab", "lm:T1", false},
		{"", "lm:T1", false}, {"lm:T1", "", false},
	} {
		if got := Differs(tc.seen, tc.stored); got != tc.want {
			t.Errorf("Differs(%q, %q) = %v", tc.seen, tc.stored, got)
		}
	}
}

// TestTable: a slot keeps the last version of its hash; a hash that took
// the slot hides the one before.
func TestTable(t *testing.T) {
	var tb Table
	tb.Set(7, "lm:a")
	tb.Set(7, "lm:b")
	if v, ok := tb.Get(7); !ok || v != "lm:b" {
		t.Errorf("Get(7) = %q %v", v, ok)
	}
	tb.Set(7+Slots, "lm:c")
	if _, ok := tb.Get(7); ok {
		t.Error("a hash that lost its slot is still known")
	}
	if _, ok := tb.Get(8); ok {
		t.Error("an empty slot is known")
	}
}

// A read's answer that cannot name a version (a blob without _meta or
// lastModified: most answers) is not decoded: decoding every relayed
// answer was a tenth of the gateway's CPU per small request. Keys the
// JSON decoder matches in another case or spelled with an escape still
// count.
func TestWatchSkipsAnswersWithoutVersions(t *testing.T) {
	blob := strings.Repeat("QUJD", 1024)
	plain := []byte(`{"jsonrpc":"2.0","id":2,"result":{"contents":[{"uri":"d","mimeType":"application/octet-stream","blob":"` + blob + `"}]}}`)
	w := &watch{saw: func(string, string) { t.Error("a version reported for an answer without one") }}
	if allocs := testing.AllocsPerRun(50, func() { w.message(plain) }); allocs > 0 {
		t.Errorf("%.0f allocations looking at an answer without a version; want 0 (not decoded)", allocs)
	}
	for _, msg := range []string{
		`{"result":{"contents":[{"uri":"d","annotations":{"LASTMODIFIED":"T1"}}]}}`,
		`{"result":{"contents":[{"uri":"d","annotations":{"lastModifi\u0065d":"T1"}}]}}`,
	} {
		got := ""
		(&watch{saw: func(_, v string) { got = v }}).message([]byte(msg))
		if got != "lm:T1" {
			t.Errorf("%s: version %q, want lm:T1", msg, got)
		}
	}
}
