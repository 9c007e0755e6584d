package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// binary is one build of core/server's test binary.
type binary struct {
	label string // "base <ref>" or "working tree"
	path  string
	dir   string // core/server in the tree it was built from
}

// build compiles the test binary at base (in a temporary worktree of the
// repository at root) and from the working tree; cleanup removes the
// worktree.
func build(root, base string) ([]binary, func(), error) {
	tmp, err := os.MkdirTemp("", "smallreq-")
	if err != nil {
		return nil, func() {}, err
	}
	wt := filepath.Join(tmp, "base")
	cleanup := func() {
		_, _ = output(root, "git", "worktree", "remove", "--force", wt)
		os.RemoveAll(tmp)
	}
	if _, err := output(root, "git", "worktree", "add", "--detach", wt, base); err != nil {
		return nil, cleanup, err
	}
	bins := []binary{
		{label: "base " + base, path: filepath.Join(tmp, "base.test"), dir: filepath.Join(wt, "core/server")},
		{label: "working tree", path: filepath.Join(tmp, "head.test"), dir: filepath.Join(root, "core/server")},
	}
	for _, b := range bins {
		if _, err := output(b.dir, "go", "test", "-c", "-o", b.path, "."); err != nil {
			return nil, cleanup, err
		}
	}
	return bins, cleanup, nil
}

// bench runs the benchmark once and parses its lines.
func (b binary) bench(benchtime string) ([]sample, error) {
	out, err := output(b.dir, b.path, "-test.run", "^$", "-test.bench", "^BenchmarkSmallRequest$",
		"-test.benchmem", "-test.benchtime", benchtime)
	if err != nil {
		return nil, err
	}
	return parse(out)
}

func output(dir, name string, args ...string) (string, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("%s %s: %w\n%s%s", name, strings.Join(args, " "), err, out, stderr.Bytes())
	}
	return strings.TrimSpace(string(out)), nil
}
