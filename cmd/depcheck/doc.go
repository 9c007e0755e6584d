// Command depcheck enforces mcpblob's package rules (docs/architecture.md)
// on the real build graph of the main module, and its size rules on every
// module of the repository. `make depcheck` runs it.
//
// It loads the main module's graph once, with `go list -deps -json ./...` at
// the module root, and the packages of every other module of the repository
// (each folder below the root with a go.mod: bench, loadtest, asm/_gen, the
// test data modules ...; .git, .tools and node_modules skipped) with
// `go list -json ./...` in its folder. Five kinds of rule are checked, all
// on non-test code:
//
//   - the package table ([allowRule], one row per package of the main
//     module) lists the only packages each may import directly besides the
//     standard library; a package without a row, or a row without a
//     package, fails too. docs/architecture.md's table must say the same,
//     row for row, and its list of graph rules must be the texts of the
//     dependency and importer rules, so the document states exactly what is
//     checked;
//   - dependency rules ([depRule]) look at a main-module package's Deps, the
//     transitive closure of its imports: which packages may appear anywhere
//     below it;
//   - importer rules ([importRule]) look at direct Imports in the main
//     module: who may import a package at all;
//   - module rules ([moduleRule]) look at direct Imports in one other module:
//     loadtest's rig imports none of its suites (bench imports the rig), and
//     neither loadtest nor bench imports core/server/... or cmd/... (they
//     drive the built binary);
//   - size rules look at the parsed source of every module: no package over
//     3,500 lines, tighter bounds under some trees of the main module
//     ([sizeRule]: no package under core/server over 2,000), and no function
//     over 80 lines. Generated files (a "// Code generated ... DO NOT EDIT."
//     line before the package clause) are not counted.
//
// A rule whose packages do not exist (yet) is reported as skipped, never as
// an error, so rules for packages that a restructuring is still creating can
// live here before the packages do.
//
// A function over 80 lines is exempt only when its body is data, detected
// structurally (see [dataReason]): a single return of a composite literal,
// or a table made only of literal bindings and a final return. Data holds no
// function literal, so no code can hide in an exemption, and every exemption
// is listed in the output.
//
// Usage:
//
//	go run ./cmd/depcheck [-report-only-sizes]
//
// It prints one line per rule, each violation as file:line under its rule,
// and "depcheck: ok" at the end; on any violation it exits 1 (2 when the
// graph cannot be loaded). With -report-only-sizes the size rules are still
// printed but do not fail the run.
package main
