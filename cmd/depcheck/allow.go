package main

import (
	"bufio"
	"bytes"
	"fmt"
	"slices"
	"strings"
)

// An allowRule is one row of the package table of docs/architecture.md:
// besides the standard library, the only packages subject may import
// directly (non-test Imports). allowed holds module-relative patterns for
// the main module ("core/mcp/...") and full import paths for third-party
// packages ("github.com/valyala/fasthttp": that path and below it).
type allowRule struct {
	subject string // a module-relative package path, exactly
	allowed []string
}

// archDoc is the document whose package table and rule list depcheck
// holds against its own tables.
const archDoc = "docs/architecture.md"

const (
	goJose  = "github.com/go-jose/go-jose/v4"
	xSys    = "golang.org/x/sys/unix"
	minioV7 = "github.com/minio/minio-go/v7"
)

// allowRules is the "may import" column of archDoc's package table, one
// entry per package of the main module (checkDoc keeps the two equal).
var allowRules = []allowRule{
	{"asm", []string{"asm/internal/race", cpuid}},
	{"asm/internal/guardbuf", []string{xSys}},
	{"asm/internal/race", nil},
	{"cmd/depcheck", nil},
	{"cmd/mcpblob", []string{"asm", "core/...", "storage/..."}},
	{"cmd/testsel", nil},
	{"core/auth", nil},
	{"core/auth/login", []string{"core/auth"}},
	{"core/auth/oauth", []string{"core/auth", goJose}},
	{"core/auth/oauthtest", nil},
	{"core/blobs", []string{"core/auth", "core/files", "core/mcp", "core/mcp/resstream", "core/tenancy", "core/token", "storage", "storage/ingest"}},
	{"core/budget", nil},
	{"core/client", nil},
	{"core/codec", []string{"asm", emmansun}},
	{"core/conformance", []string{"core/mcp"}},
	{"core/files", []string{"storage"}},
	{"core/gateway", []string{"core/gateway/blobdecode", "core/gateway/cachewatch", "core/gateway/fileargs", "core/gateway/h1", "core/gateway/offload", "core/gateway/principal", "core/gateway/readahead", "core/gateway/wire", "core/mcp/headers", "core/mcp/jsonrpc", "core/mcp/resstream", "core/token"}},
	{"core/gateway/blobdecode", []string{"asm", "core/codec"}},
	{"core/gateway/cachewatch", nil},
	{"core/gateway/fileargs", []string{"core/codec"}},
	{"core/gateway/h1", nil},
	{"core/gateway/offload", []string{"core/gateway/blobdecode"}},
	{"core/gateway/principal", nil},
	{"core/gateway/readahead", nil},
	{"core/gateway/wire", nil},
	{"core/mcp", []string{"core/budget", "core/codec", "core/token", "core/mcp/..."}},
	{"core/mcp/blocks", nil},
	{"core/mcp/bodyrate", nil},
	{"core/mcp/clientcaps", nil},
	{"core/mcp/contents", []string{"core/codec", "core/mcp/scan"}},
	{"core/mcp/credwatch", []string{"core/mcp/jsonrpc"}},
	{"core/mcp/events", nil},
	{"core/mcp/headers", []string{"core/mcp/jsonrpc"}},
	{"core/mcp/hostorigin", nil},
	{"core/mcp/jsonrpc", []string{"core/mcp/scan"}},
	{"core/mcp/limits", []string{"core/budget", "core/mcp/jsonrpc"}},
	{"core/mcp/mcphttp", []string{"core/mcp", "core/mcp/bodyrate", "core/mcp/hostorigin", "core/mcp/resstream"}},
	{"core/mcp/mcptest", []string{"core/mcp"}},
	{"core/mcp/mrtr", []string{"core/token", "core/mcp/jsonrpc", "core/mcp/scan"}},
	{"core/mcp/observe", nil},
	{"core/mcp/resstream", []string{"core/mcp/jsonrpc"}},
	{"core/mcp/scan", []string{"asm", "core/codec"}},
	{"core/mcp/session", []string{"core/budget", "core/token", "core/mcp/clientcaps", "core/mcp/credwatch",
		"core/mcp/events", "core/mcp/jsonrpc", "core/mcp/limits", "core/mcp/scan", "core/mcp/sse"}},
	{"core/mcp/sse", nil},
	{"core/mcp/tasks", []string{"core/mcp/jsonrpc"}},
	{"core/mcp/toolargs", []string{"core/mcp/scan"}},
	{"core/metrics", []string{victoriaMetrics}},
	{"core/server", []string{"asm", "core/auth", "core/blobs", "core/codec", "core/gateway", "core/mcp", "core/metrics", "core/server/...",
		"core/tenancy", "core/token", "storage", "storage/ingest", "storage/lifecycle", "storage/quota"}},
	{"core/server/admin", []string{"core/metrics", "core/server/telemetry"}},
	{"core/server/blobsvc", []string{"core/auth", "core/blobs", "core/budget", "core/mcp", "core/mcp/resstream",
		"core/mcp/scan", "core/server/blobsvc/linktus", "core/server/blobsvc/resumable", "core/server/blobsvc/uploadpage", "core/server/bodystream", "core/server/byterange",
		"core/server/gate", "core/server/lazybody", "core/server/onetime", "core/server/pace", "core/server/telemetry",
		"core/token", "storage", "storage/ingest", fasthttp}},
	{"core/server/blobsvc/linktus", []string{"core/server/blobsvc/resumable", "core/server/gate", "core/token", "core/tus",
		"storage", "storage/ingest", fasthttp}},
	{"core/server/blobsvc/resumable", []string{"core/auth", "core/server/gate", "core/server/onetime", "core/server/pace", "core/tus",
		"storage", "storage/ingest", fasthttp}},
	{"core/server/blobsvc/uploadpage", []string{"core/auth", "core/auth/login", "core/blobs", "core/server/gate",
		"core/server/telemetry", "core/token", fasthttp}},
	{"core/server/bodystream", []string{"core/mcp", "core/server/sendfile", fasthttp}},
	{"core/server/byterange", nil},
	{"core/server/connlimit", []string{"core/server/linger"}},
	{"core/server/framing", nil},
	{"core/server/front", []string{"core/auth", "core/budget", "core/gateway", "core/mcp", "core/metrics", "core/server/admin",
		"core/server/bodystream", "core/server/connlimit", "core/server/framing", "core/server/gate",
		"core/server/index", "core/server/pace", "core/server/telemetry", fasthttp}},
	{"core/server/gate", []string{"core/auth", "core/budget", "core/mcp", "core/mcp/hostorigin", "core/server/pace", "core/server/telemetry", "core/tenancy", "storage", fasthttp}},
	{"core/server/index", []string{fasthttp}},
	{"core/server/lazybody", nil},
	{"core/server/linger", nil},
	{"core/server/onetime", []string{"core/budget", "core/mcp/session", "core/token", "storage"}},
	{"core/server/pace", []string{"core/mcp/bodyrate"}},
	{"core/server/redact", nil},
	{"core/server/sendfile", []string{"storage", xSys}},
	{"core/server/telemetry", []string{"core/auth", "core/mcp", "core/mcp/observe", "core/metrics", "core/server/redact",
		"storage", "storage/observed", fasthttp}},
	{"core/server/telemetry/logbuf", nil},
	{"core/server/tracing", []string{"core/mcp/observe", "core/server/telemetry", openTelemetry}},
	{"core/server/usage", []string{"core/auth", "core/server/gate", fasthttp}},
	{"core/tenancy", []string{"core/auth", "storage", "storage/namespace"}},
	{"core/token", nil},
	{"core/tus", []string{"storage"}},
	{"storage", nil},
	{"storage/ingest", []string{"core/codec", "storage"}},
	{"storage/internal/cursor", []string{"storage"}},
	{"storage/lifecycle", []string{"storage", "storage/namespace"}},
	{"storage/localfs", []string{"storage", "storage/internal/cursor", xSys}},
	{"storage/namespace", []string{"storage"}},
	{"storage/observed", []string{"storage"}},
	{"storage/quota", []string{"storage", "storage/namespace"}},
	{"storage/s3", []string{"storage", "storage/internal/cursor", minioV7}},
	{"storage/storagetest", []string{"storage"}},
	{"storage/storagetest/s3test", nil},
}

// checkAllowed reports every direct import that the package's row of
// rules does not allow, every package without a row and every row
// without a package.
func checkAllowed(g *graph, rules []allowRule) result {
	res := result{rule: "every package imports only what its row of " + archDoc + " allows (direct imports, std always)"}
	rows := map[string]allowRule{}
	for _, r := range rules {
		rows[r.subject] = r
	}
	seen := map[string]bool{}
	for _, p := range g.main {
		rel, _ := g.rel(p.ImportPath)
		res.checked++
		r, ok := rows[rel]
		if !ok {
			res.violations = append(res.violations, fmt.Sprintf("%s: %s has no row in %s (cmd/depcheck allowRules)",
				g.importPos(p, ""), rel, archDoc))
			continue
		}
		seen[rel] = true
		for _, imp := range p.Imports {
			if !r.allows(g, imp) {
				res.violations = append(res.violations, fmt.Sprintf("%s: %s imports %s, not in its row of %s",
					g.importPos(p, imp), rel, g.short(imp), archDoc))
			}
		}
	}
	for _, r := range rules {
		if !seen[r.subject] {
			res.violations = append(res.violations, fmt.Sprintf("cmd/depcheck/allow.go: row %s names no package", r.subject))
		}
	}
	return res
}

// allows reports whether r lets its subject import imp directly.
func (r allowRule) allows(g *graph, imp string) bool {
	if p, ok := g.pkgs[imp]; ok && p.Standard {
		return true
	}
	if rel, ok := g.rel(imp); ok {
		return matchAny(r.allowed, rel)
	}
	return slices.ContainsFunc(r.allowed, func(root string) bool { return under(imp, root) })
}

// docTable and docRules are the lines that open, in archDoc, the package
// table and the list of the graph rules.
const (
	docTable = "| package | one job | may import |"
	docRules = "## Rules on the whole graph"
)

// checkDoc holds archDoc (its text) against depcheck's tables: the package
// table's rows must be allows, row for row, and the bullets under docRules
// must be the texts of deps and imps, one for one.
func checkDoc(doc []byte, allows []allowRule, deps []depRule, imps []importRule) result {
	res := result{rule: archDoc + " states the rules depcheck checks, as they are checked", unit: "rule"}
	rows, bullets := parseDoc(doc)
	want := map[string]string{}
	for _, r := range allows {
		want[r.subject] = strings.Join(sorted(r.allowed), ", ")
	}
	for _, subject := range sortedKeys(want, rows) {
		res.checked++
		got, inDoc := rows[subject]
		w, inTable := want[subject]
		switch {
		case !inDoc:
			res.violations = append(res.violations, fmt.Sprintf("%s: no row for %s (may import: %s)", archDoc, subject,
				strings.Join(append([]string{"std"}, sorted(rowOf(allows, subject))...), ", ")))
		case !inTable:
			res.violations = append(res.violations, fmt.Sprintf("%s: row %s is not in cmd/depcheck allowRules", archDoc, subject))
		case got != w:
			res.violations = append(res.violations, fmt.Sprintf("%s: %s may import %q in the doc, %q in cmd/depcheck", archDoc, subject, got, w))
		}
	}
	texts := map[string]bool{}
	for _, r := range deps {
		texts[r.rule] = true
	}
	for _, r := range imps {
		texts[r.rule] = true
	}
	for _, text := range sortedKeys(texts, bullets) {
		res.checked++
		switch {
		case !bullets[text]:
			res.violations = append(res.violations, fmt.Sprintf("%s: %q is checked but not listed under %q", archDoc, text, docRules))
		case !texts[text]:
			res.violations = append(res.violations, fmt.Sprintf("%s: %q is listed under %q but not checked", archDoc, text, docRules))
		}
	}
	return res
}

// rowOf returns the allowed list of subject's row in allows.
func rowOf(allows []allowRule, subject string) []string {
	for _, r := range allows {
		if r.subject == subject {
			return r.allowed
		}
	}
	return nil
}

// parseDoc reads the package table (package -> its may-import list, the
// backquoted names sorted and joined by ", ") and the bullets under
// docRules (each without its "- ").
func parseDoc(doc []byte) (rows map[string]string, bullets map[string]bool) {
	rows, bullets = map[string]string{}, map[string]bool{}
	var inTable, inRules bool
	sc := bufio.NewScanner(bytes.NewReader(doc))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == docTable:
			inTable = true
		case inTable && strings.HasPrefix(line, "|"):
			if cells := strings.Split(strings.Trim(line, "|"), "|"); len(cells) >= 3 && strings.Contains(cells[0], "`") {
				rows[strings.Trim(strings.TrimSpace(cells[0]), "`/")] = strings.Join(sorted(quoted(cells[len(cells)-1])), ", ")
			}
		case inTable:
			inTable = false
		case strings.HasPrefix(line, "#"):
			inRules = line == docRules
		case inRules && strings.HasPrefix(line, "- "):
			bullets[strings.TrimPrefix(line, "- ")] = true
		}
	}
	return rows, bullets
}

// quoted returns the backquoted names of s, each without a trailing "/".
func quoted(s string) []string {
	var out []string
	parts := strings.Split(s, "`")
	for i := 1; i < len(parts); i += 2 {
		out = append(out, strings.TrimSuffix(parts[i], "/"))
	}
	return out
}

// sorted returns a sorted copy of s.
func sorted(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}

// sortedKeys returns the keys of a and b, sorted, once each.
func sortedKeys[V1, V2 any](a map[string]V1, b map[string]V2) []string {
	var out []string
	for k := range a {
		out = append(out, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}
