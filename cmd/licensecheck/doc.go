// Command licensecheck keeps mcpblob's dependencies permissive: it reads the
// build graph of every go.mod in the repository and of every tool the
// Makefile installs, classifies each module's licence texts with
// github.com/google/licensecheck, judges the license field of every npm
// package the tests install, prints one table and fails on a licence the
// project may not depend on. `make licensecheck` runs it.
//
// It is a module of its own, so none of its dependencies enter mcpblob's.
//
// # What is read
//
//   - Each repository module (`git ls-files '*go.mod'`): the modules of the
//     packages `go list -deps -test ./...` lists, that is what its packages
//     and their tests build, not the whole `go list -m all`. In the root
//     module `go list -deps ./cmd/mcpblob` (-ship) marks what the shipped
//     binary links. The graph is that of the host's GOOS/GOARCH.
//   - Each tool in .tools/bin: the module list embedded in the binary
//     (debug/buildinfo, what `go version -m` prints), so a tool is checked as
//     it was built. Every `$(TOOLBIN)/name:` rule of the Makefile must have
//     its binary there; other Go binaries found there are read as well. A
//     tool built inside a module's folder can record its own module as
//     "(devel)", without a version: every version of that module in the
//     module cache is then checked in its place.
//   - The npm lock file of the test tools: each package's license field (an
//     SPDX expression), from the lock or else from the installed package.json.
//
// A module's licence is every file at the root of its folder in the module
// cache named like a licence (LICENSE, LICENCE.md, COPYING, UNLICENSE,
// LICENSE-APACHE, MIT-LICENSE, ...). Modules not in the cache are fetched
// with `go mod download`. The repository's own modules are not checked.
//
// # The rule
//
// Each licence file must be recognised — licensecheck covers at least 75%
// of its words, pkgsite's threshold — and name only accepted licences:
// MIT, MIT-0, BSD-2-Clause (and -Views), BSD-3-Clause, Apache-2.0, ISC,
// Zlib, MPL-2.0, 0BSD, Unlicense, CC0-1.0, BlueOak-1.0.0 and CC-BY-4.0. A module with no
// licence file fails; so does an npm package without a license field or
// whose field is not an SPDX expression. In an npm expression an OR is
// acceptable when one alternative is, an AND when every part is.
//
// Denied are AGPL, SSPL, BUSL and the Commons Clause, and whatever
// licensecheck types as ShareServer or NonCommercial. The allow-list
// (allow.txt beside this file: a module path or npm:name, then the reason)
// excuses any other failure — a licence kept in the parent repository, a
// documentation licence beside the code's — never a denied licence. An
// entry that matches nothing is printed as a note.
//
// # Output
//
// One row per module version or npm package: status (ok, allow, FAIL),
// module, version, licence, use (shipped: in cmd/mcpblob's build graph;
// test-only: in another package, a test or an npm test tool; tool: only in
// a tool binary) and where it is used ("." is the root module, tool:name a
// binary). Then one line per failing or allowed row with its reasons, and a
// summary.
//
// Usage:
//
//	cd cmd/licensecheck && go run . [-root DIR] [-ship ./cmd/mcpblob] [-tools .tools/bin]
//	    [-makefile Makefile] [-npm-lock core/server/testdata/node/package-lock.json]
//	    [-npm-installed .tools/node] [-allow cmd/licensecheck/allow.txt]
//
// Paths are relative to -root, the repository root by default. The exit code
// is 0 when every row is ok or allowed, 1 on a failing row, 2 when a graph,
// a tool or a licence file cannot be read.
package main
