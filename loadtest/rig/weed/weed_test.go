package weed

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestServerStartsAndStopsClean starts a single node, has it take a
// conditional PUT, stops it and checks that nothing of it is left: the
// process, and the Unix sockets `weed server` puts in /tmp.
func TestServerStartsAndStopsClean(t *testing.T) {
	bin, err := filepath.Abs("../../../.tools/bin/weed")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("%v: run `make tools`", err)
	}
	creds := S3Options{AccessKey: "weed-test", SecretKey: "weed-test-secret-key"}
	s, err := StartServer(bin, t.TempDir(), creds)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	c, err := Client(s.Addr.HTTP, creds)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	if err := Writable(ctx, c, "test"); err != nil {
		t.Fatal(err)
	}
	if len(s.sockets) != 4 {
		t.Fatalf("%d sockets to remove, want 4", len(s.sockets))
	}
	for _, sock := range s.sockets {
		if _, err := os.Stat(sock); err != nil {
			t.Errorf("socket %s not there while the node runs: %v", sock, err)
		}
	}
	pid := s.PID()
	s.Stop()
	if err := syscall.Kill(pid, 0); err == nil {
		t.Errorf("pid %d still runs after Stop", pid)
	}
	for _, sock := range s.sockets {
		if _, err := os.Stat(sock); err == nil {
			t.Errorf("socket %s left after Stop", sock)
		}
	}
}
