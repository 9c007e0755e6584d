//go:build unix

package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpblob/mcpblob/storage"
	"github.com/mcpblob/mcpblob/storage/localfs"
	"github.com/mcpblob/mcpblob/storage/namespace"
	"github.com/mcpblob/mcpblob/storage/quota"
)

// TestUsageNodeProcess is not a test: it is the body of a node that
// stores, replaces and deletes alice's objects through the quota
// wrapper until it is killed, printing a line after each operation.
func TestUsageNodeProcess(t *testing.T) {
	dir := os.Getenv(usageNodeEnv)
	if dir == "" {
		t.Skip("node process only")
	}
	raw, err := localfs.Open(dir, localfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	view := namespace.View(quota.Wrap(raw, &quota.Ledger{Records: storage.RecorderOf(raw)}), "alice")
	ctx := context.Background()
	chunk := make([]byte, 8<<10)
	for i := 0; ; i++ {
		key := fmt.Sprint("k", i%13)
		if i%5 == 4 {
			_ = view.Delete(ctx, key)
			fmt.Println("deleted", key)
			continue
		}
		size := int64(16<<10 + rand.IntN(512<<10))
		opts := storage.CreateOptions{}
		if i%2 == 0 {
			opts.Size = size
		}
		w, err := view.Create(ctx, key, opts)
		if err != nil {
			t.Fatal(err)
		}
		for n := int64(0); n < size; n += int64(len(chunk)) {
			if _, err := w.Write(chunk[:min(int64(len(chunk)), size-n)]); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := w.Commit(ctx); err != nil {
			t.Fatal(err)
		}
		fmt.Println("stored", key, size)
	}
}

// TestUsageRebuildAfterKill: a node SIGKILLed mid-operation, again and
// again on one store, never leaves the counted usage under what the store
// holds; `mcpblob usage --rebuild` then makes it equal.
func TestUsageRebuildAfterKill(t *testing.T) {
	dir := t.TempDir()
	for round := range 6 {
		killNodeMidway(t, dir, 3+round)
		truth, counted := usageOf(t, dir)
		if counted.Bytes < truth.Bytes || counted.Objects < truth.Objects {
			t.Fatalf("round %d: counted %+v under the store's %+v", round, counted, truth)
		}
		t.Logf("round %d: counted %d bytes in %d objects, the store %d in %d", round, counted.Bytes, counted.Objects, truth.Bytes, truth.Objects)
	}
	var out bytes.Buffer
	cfg := Config{Data: dir}
	if err := printUsage(t.Context(), cfg, true, &out); err != nil {
		t.Fatal(err)
	}
	truth, counted := usageOf(t, dir)
	if counted.Bytes != truth.Bytes || counted.Objects != truth.Objects {
		t.Fatalf("after --rebuild: counted %+v, the store %+v", counted, truth)
	}
	if want := fmt.Sprintf("alice\t%d\t%d\t", truth.Bytes, truth.Objects); !strings.Contains(out.String(), want) {
		t.Fatalf("usage --rebuild printed %q, want a line %q", out.String(), want)
	}
	if code := runUsage(t.Context(), []string{"--data", dir}, func(string) string { return "" }); code != exitOK {
		t.Fatalf("mcpblob usage: exit %d", code)
	}
}

// killNodeMidway runs the node on dir and SIGKILLs it after lines lines
// of output and a random few milliseconds more: most likely mid-upload.
func killNodeMidway(t *testing.T, dir string, lines int) {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestUsageNodeProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), usageNodeEnv+"="+dir)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(out)
	for n := 0; n < lines && sc.Scan(); n++ {
	}
	time.Sleep(time.Duration(rand.IntN(5000)) * time.Microsecond)
	_ = cmd.Process.Signal(syscall.SIGKILL)
	err = cmd.Wait()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() {
		t.Fatalf("node: %v, want killed", err)
	}
}

// usageOf returns what alice's objects in dir add up to and what her
// usage record counts.
func usageOf(t *testing.T, dir string) (truth, counted quota.Usage) {
	t.Helper()
	raw, err := localfs.Open(dir, localfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	all, err := quota.Scan(t.Context(), raw)
	if err != nil {
		t.Fatal(err)
	}
	counted, err = (&quota.Ledger{Records: storage.RecorderOf(raw)}).Usage(t.Context(), "alice")
	if err != nil {
		t.Fatal(err)
	}
	return all["alice"], counted
}
