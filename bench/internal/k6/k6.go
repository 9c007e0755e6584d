// Package k6 runs a k6 script the way every mcpblob load test does
// (--no-usage-report, K6_AUTO_EXTENSION_RESOLUTION=false, parameters as
// -e KEY=VALUE, the summary saved as JSON by the script's handleSummary)
// and reads the numbers back from that summary.
package k6

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strings"
	"time"
)

// Run runs script with env and writes the summary JSON to summaryPath. It
// returns the summary, k6's combined output, and whether the thresholds
// passed (k6 exits 99 when one fails). A k6 that could not run is an error.
func Run(ctx context.Context, bin, script, summaryPath string, env map[string]string, timeout time.Duration) (*Summary, string, bool, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	args := []string{"run", "--no-usage-report", "--quiet", "--no-color"}
	keys := make([]string, 0, len(env))
	for k := range env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		args = append(args, "-e", k+"="+env[k])
	}
	args = append(args, "-e", "SUMMARY_JSON="+summaryPath, script)
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(os.Environ(), "K6_AUTO_EXTENSION_RESOLUTION=false", "K6_NO_USAGE_REPORT=true")
	os.Remove(summaryPath)
	out, err := cmd.CombinedOutput()
	passed := err == nil
	var exit *exec.ExitError
	if err != nil && !(errors.As(err, &exit) && exit.ExitCode() == 99) {
		return nil, string(out), false, fmt.Errorf("k6 %s: %w\n%s", script, err, out)
	}
	s, rerr := Read(summaryPath)
	if rerr != nil {
		return nil, string(out), false, fmt.Errorf("k6 %s: %w\n%s", script, rerr, out)
	}
	if ps := cmd.ProcessState; ps != nil {
		s.CPU = ps.UserTime() + ps.SystemTime()
	}
	return s, string(out), passed, nil
}

// Summary is the part of k6's summary JSON the reports use.
type Summary struct {
	Metrics map[string]struct {
		Values     map[string]float64 `json:"values"`
		Thresholds map[string]struct {
			OK bool `json:"ok"`
		} `json:"thresholds"`
	} `json:"metrics"`
	// CPU is the CPU time (user + system) k6 itself used in the run,
	// set by Run.
	CPU time.Duration `json:"-"`
}

// Read parses a summary JSON file.
func Read(path string) (*Summary, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var s Summary
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, err
	}
	return &s, nil
}

// Value returns metric's value named v (e.g. "rate", "p(99)", "count"), 0 when absent.
func (s *Summary) Value(metric, v string) float64 {
	return s.Metrics[metric].Values[v]
}

// FailedThresholds lists "metric expr" of every failed threshold.
func (s *Summary) FailedThresholds() []string {
	var out []string
	for name, m := range s.Metrics {
		for expr, t := range m.Thresholds {
			if !t.OK {
				out = append(out, name+" "+expr)
			}
		}
	}
	sort.Strings(out)
	return out
}

// Version is `k6 version`'s first line.
func Version(bin string) string {
	out, err := exec.Command(bin, "version").Output()
	if err != nil {
		return "unknown"
	}
	return strings.SplitN(strings.TrimSpace(string(out)), "\n", 2)[0]
}
