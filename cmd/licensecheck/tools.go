package main

import (
	"debug/buildinfo"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"sort"
)

// toolRule matches a Makefile rule that installs a tool: `$(TOOLBIN)/name:`.
var toolRule = regexp.MustCompile(`(?m)^\$\(TOOLBIN\)/([A-Za-z0-9._-]+)\s*:`)

// makefileTools lists the tools the Makefile installs into its TOOLBIN.
func makefileTools(makefile string) ([]string, error) {
	if makefile == "" {
		return nil, nil
	}
	b, err := os.ReadFile(makefile)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, m := range toolRule.FindAllSubmatch(b, -1) {
		names = append(names, string(m[1]))
	}
	return names, nil
}

// addTools records the modules embedded in every Go binary of dir (as
// `go version -m` shows them: the binary as built). Each tool the Makefile
// installs must be there; another Go binary in dir is checked too.
func (g *graph) addTools(dir, makefile string) error {
	if dir == "" {
		return nil
	}
	want, err := makefileTools(makefile)
	if err != nil {
		return err
	}
	names := map[string]bool{}
	for _, n := range want {
		names[n] = true
	}
	entries, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	for _, e := range entries {
		if e.Type().IsRegular() {
			names[e.Name()] = true
		}
	}
	var sorted []string
	for n := range names {
		sorted = append(sorted, n)
	}
	sort.Strings(sorted)
	for _, n := range sorted {
		if err := g.addTool(filepath.Join(dir, n)); err != nil {
			return err
		}
	}
	return nil
}

// addTool records the main module and dependencies of one binary; a file
// that is not a Go binary is skipped.
func (g *graph) addTool(path string) error {
	bi, err := buildinfo.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("tool %s is not installed (make tools installs it)", path)
	}
	if err != nil {
		return nil // not a Go binary: nothing to read
	}
	via := "tool:" + filepath.Base(path)
	g.addMainModule(&bi.Main, via)
	for _, m := range bi.Deps {
		g.addBuildModule(m, via)
	}
	return nil
}

// addMainModule records the module a binary was built in. A tool built
// inside a module's folder can have no version, "(devel)" (weed, built in
// the module cache by the Makefile, has one): then every version of that
// module in the module cache is checked (the binary was built from one of
// them), and with none there it fails as a checkout of unknown version.
func (g *graph) addMainModule(m *debug.Module, via string) {
	if m.Version != "(devel)" || m.Replace != nil || g.isOwn(m.Path) {
		g.addBuildModule(m, via)
		return
	}
	versions := g.cachedVersions(m.Path)
	for _, v := range versions {
		g.add(modKey{m.Path, v}, toolOnly, via+"(devel)")
	}
	if len(versions) == 0 {
		g.addBuildModule(m, via)
	}
}

// addBuildModule records one module of a binary's build info (its
// replacement when replaced). The repository's own modules are skipped; any
// other module without a version ("(devel)", a folder replacement) is kept
// and fails for want of a licence in the module cache.
func (g *graph) addBuildModule(m *debug.Module, via string) {
	if r := m.Replace; r != nil {
		m = r
	}
	if m.Path == "" || g.isOwn(m.Path) {
		return
	}
	g.add(modKey{m.Path, m.Version}, toolOnly, via)
}
