package main

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/mcpblob/mcpblob/core/auth"
	"github.com/mcpblob/mcpblob/core/mcp/mcptest"
)

// TestSIGHUPReloadsKeys: SIGHUP makes `mcpblob serve` read --auth-keys
// again: a removed key is refused, an added one served; a file that does
// not load leaves the keys in use as they were.
func TestSIGHUPReloadsKeys(t *testing.T) {
	dir := t.TempDir()
	keys := filepath.Join(dir, "keys")
	writeKeys := func(content string) {
		t.Helper()
		if err := os.WriteFile(keys, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	writeKeys(auth.KeyLine("alice-key", "alice", nil) + "\n")
	addr := freePort(t)
	proc, logs := startServerProcess(t, addr, "--data", filepath.Join(dir, "data"), "--auth-keys", keys)
	status := func(key string) int {
		t.Helper()
		res, err := mcptest.New("http://"+addr+"/mcp", mcptest.Version20260728).WithBearer(key).
			Call(context.Background(), "tools/list", "")
		if err != nil {
			t.Fatal(err)
		}
		return res.Status
	}
	reload := func(want string) {
		t.Helper()
		before := strings.Count(logs.String(), want)
		if err := proc.Signal(syscall.SIGHUP); err != nil {
			t.Fatal(err)
		}
		if log := logs.waitFor(func(l string) bool { return strings.Count(l, want) > before }); strings.Count(log, want) <= before {
			t.Fatalf("no %q in the log after SIGHUP:\n%s", want, tail(log, 20))
		}
	}
	if s := status("alice-key"); s != http.StatusOK {
		t.Fatalf("alice before the reload: %d", s)
	}
	writeKeys(auth.KeyLine("bob-key", "bob", nil) + "\n")
	reload("API keys reloaded")
	if s := status("alice-key"); s != http.StatusUnauthorized {
		t.Errorf("alice's removed key after the reload: %d, want 401", s)
	}
	if s := status("bob-key"); s != http.StatusOK {
		t.Errorf("bob's added key after the reload: %d, want 200", s)
	}
	writeKeys("not a key line\n")
	reload("API keys not reloaded")
	if s := status("bob-key"); s != http.StatusOK {
		t.Errorf("bob after a failed reload: %d, want 200 (the keys unchanged)", s)
	}
}
