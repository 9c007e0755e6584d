package s3test

import (
	"net/http"
	"strings"
	"testing"
)

func TestMain(m *testing.M) { Main(m) }

func TestShared(t *testing.T) {
	s := Shared(t)
	if s2 := Shared(t); s2 != s {
		t.Fatal("Shared started a second server")
	}
	resp, err := http.Get("http://" + s.Endpoint + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("S3 health: %s", resp.Status)
	}
	// Without credentials the gateway refuses to list the buckets.
	resp, err = http.Get("http://" + s.Endpoint + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("anonymous ListBuckets: %s, want 403", resp.Status)
	}
}

func TestMissingBinary(t *testing.T) {
	t.Setenv(BinEnv, "/nonexistent/weed")
	if _, err := Binary(); err == nil || !strings.Contains(err.Error(), BinEnv) {
		t.Fatalf("Binary() error = %v, want one naming %s", err, BinEnv)
	}
	if _, err := Start(); err == nil {
		t.Fatal("Start succeeded without a binary")
	}
}

func TestBucketName(t *testing.T) {
	a, b := BucketName("t"), BucketName("t")
	if a == b || !strings.HasPrefix(a, "t") || len(a) > 63 || strings.ToLower(a) != a {
		t.Errorf("BucketName: %q, %q", a, b)
	}
}
