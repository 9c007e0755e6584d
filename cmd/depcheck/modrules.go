package main

import (
	"fmt"
	"slices"
	"strings"
)

// A moduleRule forbids direct (non-test) imports in the packages of one
// module of the repository other than the main one: the test and benchmark
// modules, whose packages the main module's rules do not see.
type moduleRule struct {
	rule    string
	module  string                       // the module's folder relative to the repository root: "loadtest"
	subject string                       // pattern relative to that folder: "rig/...", "..." for all
	deny    func(main, path string) bool // main is the main module's path
}

var moduleRules = []moduleRule{
	{"loadtest/rig/... imports no suite of loadtest (directly): bench imports the rig alone",
		"loadtest", "rig/...", func(main, path string) bool {
			return under(path, main+"/loadtest") && !under(path, main+"/loadtest/rig")
		}},
	{"loadtest/... imports neither core/server/... nor cmd/... (directly): the suites drive the built mcpblob binary as a user does",
		"loadtest", "...", serverPackages},
	{"bench/... imports neither core/server/... nor cmd/... (directly): the benchmarks measure the built mcpblob binary",
		"bench", "...", serverPackages},
}

// serverPackages reports whether path is part of the server: its assembly
// or a command.
func serverPackages(main, path string) bool {
	return under(path, main+"/core/server") || under(path, main+"/cmd")
}

// check reports every forbidden import of the rule's module, found among
// mods (the main module first).
func (r moduleRule) check(mods []*graph) result {
	res := result{rule: r.rule}
	i := slices.IndexFunc(mods, func(g *graph) bool { return g.moduleName() == r.module })
	if i < 0 {
		res.skip = "no module " + r.module + " yet"
		return res
	}
	main, g := mods[0].module, mods[i]
	for _, p := range g.main {
		if rel, _ := g.rel(p.ImportPath); !matchAny([]string{r.subject}, rel) && r.subject != "..." {
			continue
		}
		res.checked++
		for _, path := range p.Imports {
			if r.deny(main, path) {
				res.violations = append(res.violations, fmt.Sprintf("%s: %s imports %s",
					g.importPos(p, path), g.dir(p), strings.TrimPrefix(path, main+"/")))
			}
		}
	}
	return res
}
