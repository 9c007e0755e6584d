package miniotest

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
	resp, err := http.Get("http://" + s.Endpoint + "/minio/health/live")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("liveness: %s", resp.Status)
	}
}

func TestMissingBinary(t *testing.T) {
	t.Setenv(BinEnv, "/nonexistent/minio")
	if _, err := Binary(); err == nil || !strings.Contains(err.Error(), BinEnv) {
		t.Fatalf("Binary() error = %v, want one naming %s", err, BinEnv)
	}
}
