package main

import (
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
)

// skipDirs are folders that hold no module of the repository: version
// control, the installed tools, npm packages.
var skipDirs = []string{".git", ".tools", "node_modules"}

// findModules returns the folder of every go.mod under repo, repo itself
// first, then the others sorted. Test data modules count: their code is
// read by people as much as any other.
func findModules(repo string) ([]string, error) {
	var dirs []string
	err := filepath.WalkDir(repo, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != repo && slices.Contains(skipDirs, d.Name()) {
			return filepath.SkipDir
		}
		if !d.IsDir() && d.Name() == "go.mod" && filepath.Dir(path) != repo {
			dirs = append(dirs, filepath.Dir(path))
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("depcheck: %w", err)
	}
	slices.Sort(dirs)
	return append([]string{repo}, dirs...), nil
}

// loadModules loads the main module with its dependencies and every other
// module of the repository with its own packages only.
func loadModules() ([]*graph, error) {
	repo, err := mainModuleDir()
	if err != nil {
		return nil, err
	}
	dirs, err := findModules(repo)
	if err != nil {
		return nil, err
	}
	var mods []*graph
	for i, dir := range dirs {
		g, err := load(repo, dir, i == 0)
		if err != nil {
			return nil, err
		}
		mods = append(mods, g)
	}
	return mods, nil
}

// inEvery runs check on every module and sums the results into one.
func inEvery(mods []*graph, check func(*graph) result) result {
	var all result
	for i, g := range mods {
		r := check(g)
		if i == 0 {
			all.rule, all.unit = r.rule, r.unit
		}
		all.checked += r.checked
		all.violations = append(all.violations, r.violations...)
		all.exempt = append(all.exempt, r.exempt...)
	}
	all.modules = len(mods)
	return all
}

// moduleName is the module's folder relative to the repository root ("."
// for the main module).
func (g *graph) moduleName() string {
	rel, err := filepath.Rel(g.base(), g.root)
	if err != nil {
		return g.root
	}
	return strings.TrimPrefix(filepath.ToSlash(rel), "./")
}
