package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

// use is how a module reaches people; a module used several ways is
// reported by the widest (the lowest value).
type use int

const (
	shipped  use = iota // in the build graph of the shipped binary
	testOnly            // in a repository module's packages or tests, or an npm package the tests install
	toolOnly            // only in a tool binary the Makefile installs
)

func (u use) String() string {
	return [...]string{"shipped", "test-only", "tool"}[u]
}

// modKey is one module version.
type modKey struct{ path, version string }

func (k modKey) String() string { return k.path + "@" + k.version }

// usage is where one module version is used.
type usage struct {
	use use
	via map[string]bool // repository module folders ("." is the root) and "tool:name"
	dir string          // the module's folder when a replace points to one, else ""
}

// graph is every module version found, keyed by path and version.
type graph struct {
	cache string   // GOMODCACHE
	own   []string // module paths of the repository itself, not checked
	mods  map[modKey]*usage
}

// newGraph returns an empty graph reading the go command's module cache.
func newGraph() (*graph, error) {
	out, err := goCmd(".", "env", "GOMODCACHE")
	if err != nil {
		return nil, err
	}
	return &graph{cache: strings.TrimSpace(string(out)), mods: map[modKey]*usage{}}, nil
}

// add records that via uses k as u.
func (g *graph) add(k modKey, u use, via string) *usage {
	m := g.mods[k]
	if m == nil {
		m = &usage{use: u, via: map[string]bool{}}
		g.mods[k] = m
	}
	m.use = min(m.use, u)
	m.via[via] = true
	return m
}

// isOwn reports whether path is one of the repository's own modules (or a
// module under one of their paths).
func (g *graph) isOwn(path string) bool {
	for _, o := range g.own {
		if path == o || strings.HasPrefix(path, o+"/") {
			return true
		}
	}
	return false
}

// listedModule is the Module of `go list -json`.
type listedModule struct {
	Path    string
	Version string
	Main    bool
	Dir     string
	Replace *listedModule
}

// addModule records the module of one listed package. A module replaced by
// a folder is checked in that folder.
func (g *graph) addModule(m *listedModule, u use, via string) {
	if m == nil || m.Main || g.isOwn(m.Path) {
		return
	}
	k, dir := modKey{m.Path, m.Version}, ""
	if r := m.Replace; r != nil {
		k = modKey{r.Path, r.Version}
		if r.Version == "" {
			dir = r.Dir
		}
	}
	g.add(k, u, via).dir = dir
}

// addRepoModules loads the build graph of each repository module: the
// packages of ./... with their tests, and for the root module also the
// shipped pattern on its own. The repository's own module paths are all
// known before any graph is read.
func (g *graph) addRepoModules(cfg config) error {
	for _, rel := range cfg.modules {
		own, err := goListOwn(filepath.Join(cfg.root, rel))
		if err != nil {
			return err
		}
		g.own = append(g.own, own)
	}
	for i, rel := range cfg.modules {
		dir := filepath.Join(cfg.root, rel)
		if i == 0 && cfg.ship != "" {
			if err := g.goListDeps(dir, shipped, rel, cfg.ship); err != nil {
				return err
			}
		}
		if err := g.goListDeps(dir, testOnly, rel, "-test", "./..."); err != nil {
			return err
		}
	}
	return nil
}

// goListOwn is the module path of the go.mod in dir.
func goListOwn(dir string) (string, error) {
	out, err := goCmd(dir, "list", "-m")
	return strings.TrimSpace(string(out)), err
}

// goListDeps records the module of every package `go list -deps args` lists
// in dir.
func (g *graph) goListDeps(dir string, u use, via string, args ...string) error {
	out, err := goCmd(dir, append([]string{"list", "-deps", "-json=ImportPath,Module"}, args...)...)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p struct{ Module *listedModule }
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			return nil
		} else if err != nil {
			return fmt.Errorf("go list in %s: %w", dir, err)
		}
		g.addModule(p.Module, u, via)
	}
}

// goCmd runs the go command in dir and returns its standard output; an
// error carries its standard error.
func goCmd(dir string, args ...string) ([]byte, error) {
	out, err := goCmdOutput(dir, args...)
	if err != nil {
		return nil, err
	}
	return out, nil
}

// goCmdOutput runs the go command in dir and returns its standard output
// even when it fails.
func goCmdOutput(dir string, args ...string) ([]byte, error) {
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		err = fmt.Errorf("go %s in %s: %v: %s", strings.Join(args, " "), dir, err, bytes.TrimSpace(stderr.Bytes()))
	}
	return out, err
}

// sortedVia lists where a module is used, repository folders first.
func (m *usage) sortedVia() []string {
	var via []string
	for v := range m.via {
		via = append(via, v)
	}
	sort.Slice(via, func(i, j int) bool {
		ti, tj := strings.HasPrefix(via[i], "tool:"), strings.HasPrefix(via[j], "tool:")
		if ti != tj {
			return tj
		}
		return via[i] < via[j]
	})
	return via
}
