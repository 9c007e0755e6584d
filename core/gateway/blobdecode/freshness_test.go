package blobdecode

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"
)

// TestFreshness: a 2026-07-28 answer's ttlMs and cacheScope and the first
// content's annotations.lastModified and _meta (hashed as sent) reach the
// Result, before or after the blob and however the body is split; a
// ttlMs that is not a non-negative integer is no hint, and a later
// content's facts are not the first's.
func TestFreshness(t *testing.T) {
	meta := `{"etag": "v7", "n":[1,{"a":null}]}`
	sum := sha256.Sum256([]byte(meta))
	blob := b64("bytes of the resource")
	cases := []struct {
		name, body string
		want       Freshness
	}{
		{"before", `{"jsonrpc":"2.0","id":1,"result":{"ttlMs":60000,"cacheScope":"private","contents":[` +
			`{"uri":"u","_meta":` + meta + `,"annotations":{"audience":["user"],"lastModified":"2026-11-27T08:31:44Z"},"blob":"` + blob + `"}]}}`,
			Freshness{TTLGiven: true, TTLMs: 60000, CacheScope: "private", LastModified: "2026-11-27T08:31:44Z", MetaSHA256: hex.EncodeToString(sum[:])}},
		{"after", `{"jsonrpc":"2.0","id":1,"result":{"contents":[{"blob":"` + blob + `","_meta":` + meta + `},` +
			`{"uri":"v","annotations":{"lastModified":"other"},"_meta":{}}],"resultType":"complete","ttlMs":0,"cacheScope":"public"}}`,
			Freshness{TTLGiven: true, TTLMs: 0, CacheScope: "public", MetaSHA256: hex.EncodeToString(sum[:])}},
		{"none", answer(`"blob":"` + blob + `"`), Freshness{}},
		{"not integers", `{"jsonrpc":"2.0","id":1,"result":{"ttlMs":-5,"contents":[{"blob":"` + blob + `","annotations":{"lastModified":7}}]}}`, Freshness{}},
		{"ttl a string", `{"jsonrpc":"2.0","id":1,"result":{"ttlMs":"60000","cacheScope":5,"contents":[{"blob":"` + blob + `"}]}}`, Freshness{}},
		{"ttl fractional", `{"jsonrpc":"2.0","id":1,"result":{"ttlMs":1.5,"contents":[{"blob":"` + blob + `"}]}}`, Freshness{}},
	}
	for _, tc := range cases {
		for rname, wrap := range readers {
			out, res, _, err := decodeAll(t, tc.body, jsonType, wrap, Options{})
			if err != nil || string(out) != "bytes of the resource" {
				t.Fatalf("%s/%s: %q, %v", tc.name, rname, out, err)
			}
			if res.Freshness != tc.want {
				t.Errorf("%s/%s: %+v, want %+v", tc.name, rname, res.Freshness, tc.want)
			}
		}
		sse := "event: message\ndata: " + tc.body + "\n\n"
		if _, res, _, err := decodeAll(t, sse, sseType, readers["half"], Options{}); err != nil || res.Freshness != tc.want {
			t.Errorf("%s (SSE): %+v, %v; want %+v", tc.name, res.Freshness, err, tc.want)
		}
	}
}
