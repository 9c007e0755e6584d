package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

// pkg is the part of a `go list -json` package that depcheck reads.
type pkg struct {
	ImportPath string
	Name       string
	Dir        string
	Standard   bool
	Module     *struct {
		Path string
		Main bool
	}
	GoFiles, CgoFiles, IgnoredGoFiles []string
	Imports, Deps                     []string // non-test only
}

// srcFile is one parsed non-test source file of a module.
type srcFile struct {
	path      string // relative to the repository root
	ast       *ast.File
	lines     int
	generated bool
}

// graph is the build graph of one module of the repository and its parsed
// sources. Only the main module's graph holds its dependencies too.
type graph struct {
	repo   string          // repository root (the main module's directory); "" means root
	root   string          // module directory
	module string          // module path
	pkgs   map[string]*pkg // every package in the graph, by import path
	main   []*pkg          // the module's own packages, sorted
	fset   *token.FileSet
	files  map[string][]*srcFile        // by import path
	imps   map[string]map[string]string // import path -> imported path -> "file:line"
}

// mainModuleDir is the directory of the module around the working
// directory: the repository root.
func mainModuleDir() (string, error) {
	gomod, err := goCmd("", "env", "GOMOD")
	if err != nil {
		return "", err
	}
	gomod = strings.TrimSpace(gomod)
	if gomod == "" || gomod == os.DevNull {
		return "", errors.New("depcheck: not inside a Go module")
	}
	return filepath.Dir(gomod), nil
}

// load lists the packages of the module in dir (with all their dependencies
// when deps is set) and parses the module's non-test files; file paths are
// reported relative to repo.
func load(repo, dir string, deps bool) (*graph, error) {
	g := &graph{repo: repo, root: dir, pkgs: map[string]*pkg{}}
	args := []string{"list", "-json", "./..."}
	if deps {
		args = []string{"list", "-deps", "-json", "./..."}
	}
	out, err := goCmd(g.root, args...)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(strings.NewReader(out))
	for {
		p := new(pkg)
		if err := dec.Decode(p); err == io.EOF {
			break
		} else if err != nil {
			return nil, fmt.Errorf("depcheck: decode go list output: %w", err)
		}
		g.pkgs[p.ImportPath] = p
		if p.Module != nil && p.Module.Main {
			g.module = p.Module.Path
			g.main = append(g.main, p)
		}
	}
	sort.Slice(g.main, func(i, j int) bool { return g.main[i].ImportPath < g.main[j].ImportPath })
	return g, g.parse()
}

// goCmd runs the go command in dir and returns its standard output.
func goCmd(dir string, args ...string) (string, error) {
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off") // each module on its own go.mod
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("depcheck: go %s: %v\n%s", strings.Join(args, " "), err, stderr.Bytes())
	}
	return string(out), nil
}

// parse reads every non-test .go file of the main module's packages,
// including files that build constraints leave out of this build, and
// records where each import is written.
func (g *graph) parse() error {
	g.fset = token.NewFileSet()
	g.files = map[string][]*srcFile{}
	g.imps = map[string]map[string]string{}
	for _, p := range g.main {
		g.imps[p.ImportPath] = map[string]string{}
		names := append(append(append([]string(nil), p.GoFiles...), p.CgoFiles...), p.IgnoredGoFiles...)
		for _, name := range names {
			if strings.HasSuffix(name, "_test.go") {
				continue
			}
			f, err := g.parseFile(filepath.Join(p.Dir, name))
			if err != nil {
				return err
			}
			g.files[p.ImportPath] = append(g.files[p.ImportPath], f)
			for _, spec := range f.ast.Imports {
				path := strings.Trim(spec.Path.Value, "`\"")
				if _, seen := g.imps[p.ImportPath][path]; !seen {
					g.imps[p.ImportPath][path] = g.pos(spec.Pos())
				}
			}
		}
	}
	return nil
}

// parseFile parses one file and counts its lines.
func (g *graph) parseFile(abs string) (*srcFile, error) {
	src, err := os.ReadFile(abs)
	if err != nil {
		return nil, fmt.Errorf("depcheck: %w", err)
	}
	rel, err := filepath.Rel(g.base(), abs)
	if err != nil {
		return nil, fmt.Errorf("depcheck: %w", err)
	}
	f, err := parser.ParseFile(g.fset, filepath.ToSlash(rel), src, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		return nil, fmt.Errorf("depcheck: %w", err)
	}
	return &srcFile{path: filepath.ToSlash(rel), ast: f, lines: countLines(src), generated: generated(f)}, nil
}

// countLines counts lines as wc -l does, plus an unterminated last line.
func countLines(src []byte) int {
	n := bytes.Count(src, []byte("\n"))
	if len(src) > 0 && src[len(src)-1] != '\n' {
		n++
	}
	return n
}

// generated reports whether f carries a "// Code generated ... DO NOT EDIT."
// line before its package clause (https://go.dev/s/generatedcode).
func generated(f *ast.File) bool { return ast.IsGenerated(f) }

// base is the folder that reported paths are relative to: the repository
// root, or the module's own directory when no repository root is set.
func (g *graph) base() string {
	if g.repo != "" {
		return g.repo
	}
	return g.root
}

// dir is p's folder relative to the repository root, or p's path relative
// to the module when its folder is unknown.
func (g *graph) dir(p *pkg) string {
	if p.Dir == "" {
		return g.short(p.ImportPath)
	}
	rel, err := filepath.Rel(g.base(), p.Dir)
	if err != nil {
		return p.Dir
	}
	return filepath.ToSlash(rel)
}

// pos formats a position as "file:line", the file relative to the repository root.
func (g *graph) pos(p token.Pos) string {
	at := g.fset.Position(p)
	return fmt.Sprintf("%s:%d", at.Filename, at.Line)
}

// importPos is where p imports path, or p's folder if that is unknown.
func (g *graph) importPos(p *pkg, path string) string {
	if at, ok := g.imps[p.ImportPath][path]; ok {
		return at
	}
	return g.dir(p) + "/"
}

// rel returns path relative to the module ("." for its root package) and
// whether path is in the main module at all.
func (g *graph) rel(path string) (string, bool) {
	if path == g.module {
		return ".", true
	}
	rest, ok := strings.CutPrefix(path, g.module+"/")
	return rest, ok && g.module != ""
}

// short is path relative to the module when it is in it, else path itself.
func (g *graph) short(path string) string {
	if rel, ok := g.rel(path); ok {
		return rel
	}
	return path
}

// thirdParty reports whether path is neither in the standard library nor in
// the main module.
func (g *graph) thirdParty(path string) bool {
	p, ok := g.pkgs[path]
	return ok && !p.Standard && (p.Module == nil || !p.Module.Main)
}

// matching returns the main module's packages that match one of patterns.
func (g *graph) matching(patterns ...string) []*pkg {
	var out []*pkg
	for _, p := range g.main {
		if rel, _ := g.rel(p.ImportPath); matchAny(patterns, rel) {
			out = append(out, p)
		}
	}
	return out
}

// matchAny reports whether rel, a module-relative package path, matches one
// of patterns: "a/b" matches only a/b, "a/b/..." matches a/b and below it.
func matchAny(patterns []string, rel string) bool {
	for _, pat := range patterns {
		if under(rel, strings.TrimSuffix(pat, "/...")) && (strings.HasSuffix(pat, "/...") || rel == pat) {
			return true
		}
	}
	return false
}

// under reports whether path is root or below it.
func under(path, root string) bool {
	return path == root || strings.HasPrefix(path, root+"/")
}
