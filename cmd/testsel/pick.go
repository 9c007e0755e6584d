package main

import (
	"go/ast"
	"go/build/constraint"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
)

// pkgTests is what the test files of one directory say about the switches:
// which functions read one, directly or through a call, and which are
// tests.
type pkgTests struct {
	calls  map[string][]string // function or method name → names it calls
	reads  map[string]bool     // function names whose body reads a switch
	tests  []string            // top-level Test, Fuzz and Example functions
	global bool                // TestMain or a package-level var reads a switch
}

// loadDir parses the *_test.go files of dir, whatever their build
// constraints.
func loadDir(dir string) (*pkgTests, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*_test.go"))
	if err != nil {
		return nil, err
	}
	p := &pkgTests{calls: map[string][]string{}, reads: map[string]bool{}}
	fset := token.NewFileSet()
	for _, name := range files {
		f, err := parser.ParseFile(fset, name, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		p.addFile(f)
	}
	return p, nil
}

func (p *pkgTests) addFile(f *ast.File) {
	raceFile := namesRace(f)
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			name := d.Name.Name
			p.calls[name] = append(p.calls[name], calledNames(d)...)
			if raceFile || readsSwitch(d) {
				p.reads[name] = true
			}
			if d.Recv == nil && isTest(name) {
				p.tests = append(p.tests, name)
			}
		case *ast.GenDecl:
			if d.Tok == token.VAR && readsSwitch(d) {
				p.global = true
			}
		}
	}
}

// picked returns the tests that read a switch, directly or through calls.
func (p *pkgTests) picked() []string {
	for changed := true; changed; {
		changed = false
		for name, callees := range p.calls {
			if p.reads[name] {
				continue
			}
			for _, c := range callees {
				if p.reads[c] {
					p.reads[name], changed = true, true
					break
				}
			}
		}
	}
	if p.reads["TestMain"] {
		p.global = true
	}
	var out []string
	for _, t := range p.tests {
		if p.reads[t] {
			out = append(out, t)
		}
	}
	return out
}

func isTest(name string) bool {
	for _, prefix := range []string{"Test", "Fuzz", "Example"} {
		if rest, ok := strings.CutPrefix(name, prefix); ok && name != "TestMain" {
			if rest == "" || !('a' <= rest[0] && rest[0] <= 'z') {
				return true
			}
		}
	}
	return false
}

// namesRace reports a //go:build line that mentions the race tag.
func namesRace(f *ast.File) bool {
	for _, cg := range f.Comments {
		if cg.Pos() > f.Package {
			break
		}
		for _, c := range cg.List {
			expr, err := constraint.Parse(c.Text)
			if err != nil {
				continue
			}
			found := false
			expr.Eval(func(tag string) bool { found = found || tag == "race"; return true })
			if found {
				return true
			}
		}
	}
	return false
}

// readsSwitch reports whether n reads testing.Short, the test.short flag or
// raceEnabled.
func readsSwitch(n ast.Node) bool {
	found := false
	ast.Inspect(n, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.SelectorExpr:
			if id, ok := x.X.(*ast.Ident); ok && id.Name == "testing" && x.Sel.Name == "Short" {
				found = true
			}
		case *ast.Ident:
			if x.Name == "raceEnabled" {
				found = true
			}
		case *ast.BasicLit:
			if s, err := strconv.Unquote(x.Value); err == nil && x.Kind == token.STRING && s == "test.short" {
				found = true
			}
		}
		return !found
	})
	return found
}

// calledNames lists the names d calls or refers to: plain identifiers and
// the selected name of x.Name, so methods and functions passed as values
// count too.
func calledNames(d *ast.FuncDecl) []string {
	var names []string
	ast.Inspect(d, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.Ident:
			names = append(names, x.Name)
		case *ast.SelectorExpr:
			names = append(names, x.Sel.Name)
		}
		return true
	})
	return names
}
