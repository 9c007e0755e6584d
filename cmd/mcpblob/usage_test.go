package main

import (
	"testing"
)

// usageNodeEnv names the store folder of the node process of
// usage_kill_test.go (TestMain runs only the tests for one).
const usageNodeEnv = "MCPBLOB_USAGE_NODE"

// TestUsageArgs: an unknown flag or a stray argument is a usage error;
// an empty store prints only the header.
func TestUsageArgs(t *testing.T) {
	noEnv := func(string) string { return "" }
	for _, args := range [][]string{{"--nope"}, {"stray"}} {
		if code := runUsage(t.Context(), args, noEnv); code != exitUsage {
			t.Errorf("mcpblob usage %v: exit %d, want %d", args, code, exitUsage)
		}
	}
	env := map[string]string{"MCPBLOB_DATA": t.TempDir()}
	if code := runUsage(t.Context(), []string{"--rebuild"}, func(k string) string { return env[k] }); code != exitOK {
		t.Errorf("mcpblob usage --rebuild on an empty store: exit %d", code)
	}
}
