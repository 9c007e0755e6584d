package main

import (
	"strings"
	"testing"
)

func TestScan(t *testing.T) {
	s, err := newSecrets(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	key := s.apiKeys["alice"]
	m := s.Marker()
	s.AddToken("/u token", "eyJwYXlsb2FkIjoxfQ.c2lnbmF0dXJlLW9mLXRoaXMtdG9rZW4tMDEyMzQ")
	s.Add("short", "too-short") // under windowLen: never registered
	log := strings.Join([]string{
		`level=DEBUG msg="request" path=/u/eyJwYXlsb2…`,                           // a token's first characters: fine
		`level=DEBUG msg="fasthttp: contents: Authorization: Bearer ` + key + `"`, // the key
		`level=INFO msg="upload" file="data:text/plain;base64,QUJD` + m + `QUJD"`, // a marker inside a payload
		`level=INFO msg=x sig=c2lnbmF0dXJlLW9mLXRoaXMtdG9rZW4tMDEyMzQ`,            // a token's signature
		`level=INFO msg="too-short"`,
	}, "\n")
	hits := s.scan([]byte(log))
	if len(hits) != 3 {
		t.Fatalf("got %d hits, want 3: %+v", len(hits), hits)
	}
	for _, h := range hits {
		if strings.Contains(h.line, key) || strings.Contains(h.line, m) {
			t.Errorf("the reported line shows the secret: %s", h.line)
		}
	}
	if hits[0].kind != "API key of alice" || hits[1].kind != "data URI payload" || hits[2].kind != "/u token" {
		t.Errorf("kinds %q %q %q", hits[0].kind, hits[1].kind, hits[2].kind)
	}
}

func TestPanics(t *testing.T) {
	log := "level=INFO msg=ok\npanic: runtime error: index out of range\n\ngoroutine 7 [running]:\nlevel=ERROR msg=\"recovered from a Panic\"\n"
	if got := panics([]byte(log)); len(got) != 3 {
		t.Errorf("got %q, want 3 lines", got)
	}
	if got := panics([]byte("level=DEBUG msg=request path=/v1/blobs/x\n")); len(got) != 0 {
		t.Errorf("got %q for a clean log", got)
	}
}
