package main

import (
	"fmt"
	"slices"
	"strings"
)

const (
	fasthttp        = "github.com/valyala/fasthttp"
	minioGo         = "github.com/minio/minio-go" // any major version: minio-go/v7 is below it
	cpuid           = "github.com/klauspost/cpuid/v2"
	victoriaMetrics = "github.com/VictoriaMetrics/metrics"
	emmansun        = "github.com/emmansun/base64"
	openTelemetry   = "go.opentelemetry.io" // the SDK, its API and the OTLP exporter
)

// A depRule forbids packages anywhere in the dependencies (Deps: the
// transitive non-test imports) of the packages matching subject.
type depRule struct {
	rule    string
	subject string                          // module-relative pattern: "asm", "core/mcp/..."
	deny    func(g *graph, dep string) bool // reports whether dep is forbidden
}

// An importRule names the only packages of the main module that may import
// a target package directly (non-test Imports).
type importRule struct {
	rule    string
	target  func(g *graph, path string) bool
	allowed []string // module-relative patterns of the allowed importers
}

var depRules = []depRule{
	{"core/mcp/... imports neither fasthttp nor minio-go (transitively)",
		"core/mcp/...", below(fasthttp, minioGo)},
	{"asm imports only std and cpuid (transitively, third-party)",
		"asm", thirdPartyExcept(cpuid)},
	{"storage (root) imports only std (transitively, third-party)",
		"storage", thirdPartyExcept()},
	{"core/budget imports only std (transitively, third-party)",
		"core/budget", thirdPartyExcept()},
	{"core/codec imports only std, asm, emmansun/base64 (+ cpuid via asm) (transitively, third-party)",
		"core/codec", thirdPartyExcept(cpuid, emmansun)},
	{"core/token imports only std (transitively, third-party)",
		"core/token", thirdPartyExcept()},
	{"core/client imports only std (transitively, third-party)",
		"core/client", thirdPartyExcept()},
	{"core/auth imports only std (transitively, third-party): the token library stays in core/auth/oauth",
		"core/auth", thirdPartyExcept()},
	{"core/metrics imports only std and VictoriaMetrics/metrics (transitively, third-party)",
		"core/metrics", thirdPartyExcept(victoriaMetrics)},
	{"core/auth/oauthtest imports only std (transitively, third-party): the test authorization server is its own module",
		"core/auth/oauthtest", thirdPartyExcept()},
	{"core/mcp/... imports no OpenTelemetry package (transitively): tracing reaches it through core/mcp/observe",
		"core/mcp/...", below(openTelemetry)},
	{"core/mcp/... imports nothing under storage/ (transitively): the protocol knows no blob",
		"core/mcp/...", inModule("storage/...")},
	{"core/mcp/mcphttp imports only std, core/mcp, core/mcp/bodyrate and core/mcp/hostorigin (transitively: nothing they do not already need)",
		"core/mcp/mcphttp", beyondDepsOf("core/mcp", "core/mcp/bodyrate", "core/mcp/hostorigin")},
	{"core/mcp/mcptest imports only std and core/mcp (transitively: nothing core/mcp does not already need)",
		"core/mcp/mcptest", beyondDepsOf("core/mcp")},
	{"core/server/front does not import the blob service (transitively): it knows it only as front.Service",
		"core/server/front", inModule("core/server/blobsvc/...")},
	{"core/server/blobsvc/... does not import the front (transitively)",
		"core/server/blobsvc/...", inModule("core/server/front")},
	{"core/server/gate imports neither the front, the blob service nor the assembly (transitively): both sides share it",
		"core/server/gate", inModule("core/server", "core/server/front", "core/server/blobsvc/...")},
}

var importRules = []importRule{
	{"only core/server/... imports fasthttp",
		below(fasthttp), []string{"core/server/..."}},
	{"only storage/s3 imports minio-go",
		below(minioGo), []string{"storage/s3"}},
	{"only core/blobs, core/files, core/server/..., core/tenancy, core/tus, storage/... and cmd/... import storage/...",
		inModule("storage/..."), []string{"core/blobs", "core/files", "core/server/...", "core/tenancy", "core/tus", "storage/...", "cmd/..."}},
	{"only core/server (the assembly) and cmd/... (for their Options) import core/server/front and core/server/blobsvc/...",
		inModule("core/server/front", "core/server/blobsvc/..."), []string{"core/server", "core/server/blobsvc/...", "cmd/..."}},
	{"only core/server/tracing imports OpenTelemetry (go.opentelemetry.io/...)",
		below(openTelemetry), []string{"core/server/tracing"}},
	{"only cmd/... imports core/conformance",
		inModule("core/conformance/..."), []string{"cmd/...", "core/conformance/..."}},
}

// below matches packages at or below any of roots (full import paths).
func below(roots ...string) func(*graph, string) bool {
	return func(_ *graph, path string) bool {
		return slices.ContainsFunc(roots, func(root string) bool { return under(path, root) })
	}
}

// inModule matches main-module packages by module-relative patterns.
func inModule(patterns ...string) func(*graph, string) bool {
	return func(g *graph, path string) bool {
		rel, ok := g.rel(path)
		return ok && matchAny(patterns, rel)
	}
}

// beyondDepsOf matches packages outside the standard library that are
// neither one of roots (module-relative) nor among a root's own
// dependencies.
func beyondDepsOf(roots ...string) func(*graph, string) bool {
	return func(g *graph, path string) bool {
		if p, ok := g.pkgs[path]; !ok || p.Standard {
			return false
		}
		for _, root := range roots {
			r, ok := g.pkgs[g.module+"/"+root]
			if !ok {
				return true
			}
			if path == r.ImportPath || slices.Contains(r.Deps, path) {
				return false
			}
		}
		return true
	}
}

// thirdPartyExcept matches third-party packages other than the allowed
// roots and the roots' own dependencies (the Makefile recipe's
// `go list -deps cpuid` allowance).
func thirdPartyExcept(allowed ...string) func(*graph, string) bool {
	return func(g *graph, path string) bool {
		if !g.thirdParty(path) {
			return false
		}
		for _, root := range allowed {
			if p, ok := g.pkgs[root]; ok && (path == root || slices.Contains(p.Deps, path)) {
				return false
			}
		}
		return true
	}
}

// check reports every forbidden dependency of every subject package.
func (r depRule) check(g *graph) result {
	res := result{rule: r.rule}
	subjects := g.matching(r.subject)
	if len(subjects) == 0 {
		res.skip = "no package " + r.subject + " yet"
		return res
	}
	res.checked = len(subjects)
	for _, p := range subjects {
		for _, dep := range p.Deps {
			if r.deny(g, dep) {
				chain := g.chain(p, dep)
				res.violations = append(res.violations,
					fmt.Sprintf("%s: %s", g.importPos(p, chain[1]), g.shortChain(chain)))
			}
		}
	}
	return res
}

// check reports every direct import of the target by a package that is not
// allowed to import it.
func (r importRule) check(g *graph) result {
	res := result{rule: r.rule}
	if !slices.ContainsFunc(g.paths(), func(path string) bool { return r.target(g, path) }) {
		res.skip = "no such package in the graph"
		return res
	}
	for _, p := range g.main {
		if rel, _ := g.rel(p.ImportPath); matchAny(r.allowed, rel) {
			continue
		}
		res.checked++
		for _, imp := range p.Imports {
			if r.target(g, imp) {
				res.violations = append(res.violations,
					fmt.Sprintf("%s: %s imports %s", g.importPos(p, imp), g.short(p.ImportPath), g.short(imp)))
			}
		}
	}
	return res
}

// paths returns the import paths of every package in the graph, sorted.
func (g *graph) paths() []string {
	var out []string
	for path := range g.pkgs {
		out = append(out, path)
	}
	slices.Sort(out)
	return out
}

// chain returns the shortest import path from p to dep, both included,
// found breadth-first over direct imports.
func (g *graph) chain(p *pkg, dep string) []string {
	prev := map[string]string{p.ImportPath: ""}
	queue := []string{p.ImportPath}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		if cur == dep {
			var out []string
			for ; cur != ""; cur = prev[cur] {
				out = append(out, cur)
			}
			slices.Reverse(out)
			return out
		}
		if q, ok := g.pkgs[cur]; ok {
			for _, imp := range q.Imports {
				if _, seen := prev[imp]; !seen {
					prev[imp] = cur
					queue = append(queue, imp)
				}
			}
		}
	}
	return []string{p.ImportPath, dep} // unreachable for a consistent graph
}

// shortChain formats an import chain as "a -> b -> c".
func (g *graph) shortChain(chain []string) string {
	short := make([]string, len(chain))
	for i, path := range chain {
		short[i] = g.short(path)
	}
	return strings.Join(short, " -> ")
}
