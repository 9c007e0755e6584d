#!/usr/bin/env bash
# testpkgs.sh: which packages a leg of `make test` runs, computed from the sources,
# so a new package, or a new gate in an old one, is picked up without a hand list.
#
#   .ci/testpkgs.sh full [PATTERN...]
#       The packages whose tests do something else without `-race -short` (make
#       test-full runs these at full size; test-race has run every package). A
#       package is listed when a file in its test binary can tell the two apart:
#       one of its own files, or a non-test file of a package of this module that
#       it or its tests import (storage/storagetest, say), reads testing.Short or
#       the test.short flag, or has a build constraint naming race.
#       asm/internal/race is not such a file: its race build only annotates
#       memory for the detector.
#
#   .ci/testpkgs.sh tags-direct TAGS [PATTERN...]
#       Of those, the packages whose non-test files import a package the
#       tags build from other files directly (or that are one): make
#       fuzz-smoke's purego run, where a fuzz target reaches the changed
#       code through its own package (a URI parser in a package that also
#       imports the codec's users does not).
#
#   .ci/testpkgs.sh tags TAGS [PATTERN...]
#       The packages whose code under test is built from other files with
#       -tags TAGS (make test-purego and fuzz-smoke run only these with
#       purego,noasm): a package of this module that compiles another set of
#       Go or assembly files (today asm and core/codec), the package itself or
#       anything its non-test files import. The standard library and
#       third-party modules are left out: their purego and noasm variants are
#       their projects' to test.
#
# PATTERN defaults to ./... and is resolved in the current directory's module.
# Prints one import path per line, sorted.
set -euo pipefail

GO=${GO:-go}
race_only_for_detector='/asm/internal/race$'

# list_packages [FLAGS...] -- PATTERN...: every package of the patterns' test
# binaries, each test binary (path ending in .test) and each test variant
# ("p [q.test]") as one line "ip|dir|module|files|deps|imports". files are
# the Go and assembly files the build compiles; deps (everything linked) and
# imports (the direct imports) have no variant suffixes.
list_packages() {
	local flags=()
	while [ "$1" != -- ]; do
		flags+=("$1")
		shift
	done
	shift
	"$GO" list -deps -test "${flags[@]}" \
		-f '{{if not .Standard}}{{.ImportPath}}|{{.Dir}}|{{with .Module}}{{.Path}}{{end}}|{{join .GoFiles ","}};{{join .SFiles ","}};{{join .TestGoFiles ","}};{{join .XTestGoFiles ","}}|{{join .Deps ","}}|{{join .Imports ","}}{{end}}' \
		"$@" | awk -F'|' -v OFS='|' '{ gsub(/ \[[^]]*\]/, "", $5); gsub(/ \[[^]]*\]/, "", $6); print }'
}

# own_packages prints the lines of this module's packages, without test variants
# and test binaries.
own_packages() {
	local mod
	mod=$("$GO" list -m)
	awk -F'|' -v mod="$mod" '$3 == mod && $1 !~ / \[/ && $1 !~ /\.test$/'
}

# marked_full reads list_packages and prints "ip own" for a package whose test
# files tell -race -short apart, "ip lib" for one whose non-test files do.
marked_full() {
	local ip dir f kind
	own_packages | while IFS='|' read -r ip dir _; do
		[[ $ip =~ $race_only_for_detector ]] && continue
		for f in "$dir"/*.go; do
			[ -e "$f" ] || continue
			kind=lib
			case $f in *_test.go) kind=own ;; esac
			if grep -qE 'testing\.Short\b|"test\.short"|^//go:build.*\brace\b' "$f"; then
				echo "$ip $kind"
			fi
		done
	done | sort -u
}

# marked_tags LISTING TAGGED prints "ip lib" for each package of this module whose
# files differ between the two listings.
marked_tags() {
	comm -3 <(own_packages <"$1" | cut -d'|' -f1,4 | sort -u) \
		<(own_packages <"$2" | cut -d'|' -f1,4 | sort -u) |
		sed 's/^\t//; s/|.*/ lib/' | sort -u
}

# select_packages MARKERS LISTING SCOPE prints each package with a test binary in
# LISTING whose scope holds a marked package: "own" markers count for the
# package itself, "lib" markers wherever they are imported. SCOPE is "binary"
# (everything the test binary links), "package" (what the package's non-test
# files import, at any depth) or "imports" (what they import directly).
select_packages() {
	local ip kind pkg deps d hit
	declare -A own lib scope_deps
	while read -r ip kind; do
		if [ "$kind" = own ]; then own[$ip]=1; else lib[$ip]=1; fi
	done <"$1"
	while IFS='|' read -r ip _ _ _ deps imports; do
		case $3:$ip in
		binary:*.test) scope_deps[${ip%.test}]=$deps ;;
		package:*" ["* | package:*.test | imports:*" ["* | imports:*.test) ;;
		package:*) scope_deps[$ip]=$deps ;;
		imports:*) scope_deps[$ip]=$imports ;;
		esac
	done <"$2"
	awk -F'|' '$1 ~ /\.test$/ { sub(/\.test$/, "", $1); print $1 }' "$2" | while read -r pkg; do
		hit=${own[$pkg]:-${lib[$pkg]:-}}
		IFS=, read -r -a deplist <<<"${scope_deps[$pkg]:-}"
		for d in "${deplist[@]}"; do
			[ -n "$hit" ] && break
			hit=${lib[$d]:-}
		done
		[ -z "$hit" ] || echo "$pkg"
	done
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

mode=${1:-}
shift || true
case $mode in
full)
	[ $# -gt 0 ] || set -- ./...
	list_packages -- "$@" >"$tmp/list"
	marked_full <"$tmp/list" >"$tmp/marked"
	select_packages "$tmp/marked" "$tmp/list" binary | sort -u
	;;
tags | tags-direct)
	[ $# -gt 0 ] || { echo "usage: $0 $mode TAGS [PATTERN...]" >&2; exit 2; }
	tags=$1
	shift
	[ $# -gt 0 ] || set -- ./...
	list_packages -- "$@" >"$tmp/list"
	list_packages -tags "$tags" -- "$@" >"$tmp/tagged"
	marked_tags "$tmp/list" "$tmp/tagged" >"$tmp/marked"
	scope=package
	[ "$mode" = tags ] || scope=imports
	select_packages "$tmp/marked" "$tmp/tagged" $scope | sort -u
	;;
*)
	echo "usage: $0 full [PATTERN...] | tags TAGS [PATTERN...] | tags-direct TAGS [PATTERN...]" >&2
	exit 2
	;;
esac
