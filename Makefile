# Surety. Two commands set everything up on a fresh clone:
#   make run    a node on the embedded chain (in-process EVM, SQLite in .data/)
#   make test   every test: go vet, staticcheck, forge fmt, forge tests and gas snapshot, go
#               tests (with Anvil), a short run of every Go fuzz target
# The Makefile installs what it needs: Go modules through the Go toolchain, Foundry and solc
# from npm into .tools/ (pinned by package.json and package-lock.json), and Clef (pinned by
# CLEF_VERSION) built from the Go module proxy into .tools/bin; where Chromium is missing,
# Debian's chromium through apt-get, for the explorer's browser test.

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

TOOLS       := .tools
TOOLS_STAMP := $(TOOLS)/.installed
FOUNDRY     := $(TOOLS)/node_modules/@foundry-rs
FORGE       := $(FOUNDRY)/forge-linux-amd64/bin/forge
# Clef, go-ethereum's external signer, for the tests of wallets behind it: built from the Go
# module proxy (go-ethereum dropped it after this release).
CLEF_VERSION := v1.15.11
CLEF         := $(TOOLS)/bin/.clef-$(CLEF_VERSION)
# The web explorer's npm toolchain (esbuild, uPlot, playwright-core), installed by npm ci.
WEB_DIR   := explorer/web
WEB_STAMP := $(WEB_DIR)/node_modules/.installed
VERSION     ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
GO_LDFLAGS  := -X main.version=$(VERSION)

# The explorer's browser test (testnet/e2e TestExplorerInBrowser) drives the system's Chromium
# through playwright-core: Playwright's own browser download cannot work on these machines.
# Where CHROMIUM is missing, Debian's package is installed with apt-get, non-interactively (as
# root, or through sudo). Elsewhere make says so and goes on (that test then fails in CI and is
# skipped outside it): install Chromium and point CHROMIUM at it.
CHROMIUM ?= /usr/bin/chromium
export CHROMIUM
WORDNET  := /usr/share/wordnet
SUDO     := $(if $(filter 0,$(shell id -u)),,sudo)

# make run / make devnet settings: override on the command line, e.g. `make run LISTEN=127.0.0.1:9000`.
DATA_DIR ?= .data
LISTEN   ?= 127.0.0.1:7746
PORT     ?= 8545
NODES    ?= 1
LOG_EPOCH ?= 1h
LOG_GRACE ?= 15m

# SQLite's FTS5 (the registry's search) is compiled in only with this build tag.
GOTAGS := sqlite_fts5
export GOFLAGS := $(strip $(GOFLAGS) -tags=$(GOTAGS))

# CI fuzzes harder (foundry.toml's ci profile); the committed gas snapshot is always taken
# with the default profile so that it compares like with like.
FORGE_PROFILE := $(if $(CI),ci,default)

.PHONY: help tools build run demo test test-go test-forge test-fuzz test-ts test-python test-explorer-lib test-short test-race vet devnet bench bench-large contracts explorer semantic-model clean

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-10s %s\n", $$1, $$2}'

tools: $(TOOLS_STAMP) $(CLEF) $(WEB_STAMP) $(CHROMIUM) $(WORDNET)/data.noun ## install Foundry (anvil, forge, cast), solc and Clef into .tools/, the Go modules, the explorer's npm toolchain, chromium and WordNet

$(CHROMIUM):
	@if ! command -v apt-get >/dev/null; then \
		echo "make: $(CHROMIUM) is missing and there is no apt-get: install Chromium and set CHROMIUM=/path/to/it for the explorer's browser test"; \
	else \
		echo "make: $(CHROMIUM) is missing; installing Debian's chromium for the explorer's browser test (apt-get update; apt-get install chromium)"; \
		$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get update -qq; \
		$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium; \
	fi

$(CLEF): # a stamp named for the version: a new CLEF_VERSION builds again
	@mkdir -p $(TOOLS)/bin
	rm -rf $(TOOLS)/clef-build $(TOOLS)/bin/.clef-* && mkdir -p $(TOOLS)/clef-build
	cd $(TOOLS)/clef-build && printf 'module clefbuild\n\ngo 1.24\n' > go.mod && \
		GOFLAGS=-mod=mod GOWORK=off go get github.com/ethereum/go-ethereum/cmd/clef@$(CLEF_VERSION) && \
		GOFLAGS=-mod=mod GOWORK=off go build -o ../bin/clef github.com/ethereum/go-ethereum/cmd/clef
	rm -rf $(TOOLS)/clef-build
	@touch $@

$(TOOLS_STAMP): package.json package-lock.json
	@command -v go >/dev/null || { echo "make: Go 1.26 is required (https://go.dev/dl)"; exit 1; }
	@command -v npm >/dev/null || { echo "make: npm (Node.js 20+) is required to install Foundry and solc"; exit 1; }
	@mkdir -p $(TOOLS)
	cp package.json package-lock.json $(TOOLS)/
	cd $(TOOLS) && npm ci --no-audit --no-fund --loglevel=error
	go mod download
	@touch $@

# The web explorer (explorer/): its sources in explorer/web, built by the pinned esbuild
# (explorer/web/package-lock.json, installed by npm ci when the lock changes: stamped) into
# explorer/dist, which is committed and embedded in the binary. explorer.TestBundleIsBuilt
# fails when dist is not what the sources build. WEB_DIR and WEB_STAMP are set at the top.

$(WEB_STAMP): $(WEB_DIR)/package.json $(WEB_DIR)/package-lock.json
	@command -v npm >/dev/null || { echo "make: npm (Node.js 20+) is required for the explorer's toolchain"; exit 1; }
	cd $(WEB_DIR) && npm ci --no-audit --no-fund --loglevel=error
	@touch $@

explorer: $(WEB_STAMP) ## rebuild the web explorer's bundle (explorer/dist) after a change in explorer/web
	cd $(WEB_DIR) && node build.mjs ../dist

.PHONY: screenshots
screenshots: tools ## retake the explorer's screenshots (docs/explorer/*.png) with its browser test
	SURETY_SCREENSHOTS=$(CURDIR)/docs/explorer go test ./testnet/e2e -run '^TestExplorerInBrowser$$' -count=1

build: ## build bin/surety
	go build -ldflags '$(GO_LDFLAGS)' -o bin/surety ./cmd/surety

run: build ## run a node on the embedded chain (DATA_DIR, LISTEN, LOG_EPOCH, LOG_GRACE)
	./bin/surety node --data-dir $(DATA_DIR) --listen $(LISTEN) --log-epoch $(LOG_EPOCH) --log-grace $(LOG_GRACE)

demo: build ## play a marketplace day end to end on the embedded chain (under a minute)
	./bin/surety demo

devnet: tools build ## start Anvil on PORT, deploy the contracts, run NODES node processes against it; Ctrl-C stops all
	./bin/surety devnet --port $(PORT) --listen $(LISTEN) --data-dir .devnet --nodes $(NODES) --log-epoch $(LOG_EPOCH) --log-grace $(LOG_GRACE)

# vet and test-forge run side by side (their output kept apart): forge's compile is solcjs, one
# core for about 110 s when scripts/solc has not kept its answer, which go vet and staticcheck
# use meanwhile. test-fuzz lasts FUZZTIME per target whatever else runs (42 targets: about
# 140 s), so the short steps (test-short) run beside it rather than after it, the fuzzer at a
# lower priority (FUZZ_NICE): it explores in the CPU time they leave (the two: 223 s one after
# the other, 154 s side by side). Each step's time is printed as it ends ("make test: test-go
# took 292 s"), so a slow step shows.
SHORT_STEPS := test-race test-ts test-python test-explorer-lib

test: tools ## run every test
	@t=$$(date +%s); $(MAKE) --no-print-directory -j2 --output-sync=target vet test-forge || exit 1; \
		echo "make test: vet and test-forge took $$(( $$(date +%s) - t )) s"
	@t=$$(date +%s); $(MAKE) --no-print-directory test-go || exit 1; \
		echo "make test: test-go took $$(( $$(date +%s) - t )) s"
	@t=$$(date +%s); $(MAKE) --no-print-directory -j2 --output-sync=target test-fuzz test-short FUZZ_NICE='nice -n 10' || exit 1; \
		echo "make test: test-fuzz and test-short took $$(( $$(date +%s) - t )) s"

test-short: ## the short steps one after another (test-race, test-ts, test-python, test-explorer-lib)
	@for step in $(SHORT_STEPS); do t=$$(date +%s); \
		$(MAKE) --no-print-directory $$step || exit 1; \
		echo "make test: $$step took $$(( $$(date +%s) - t )) s"; done

# The reputation service's readers against its recomputations and followed audits, under the
# race detector: the tests that share its snapshots across goroutines.
RACE_TESTS := TestReadersDuringRecomputations|TestCarryInPlaceKeepsTheLastSnapshot|TestNewTimeTakesTheListOver|TestRefreshKeepsAuditsFiledMeanwhile
test-race: tools ## the reputation service's concurrency tests under -race
	go test -race -count=1 -ldflags=-w -run '^($(RACE_TESTS))$$' ./reputation

vet: tools ## go vet, staticcheck and forge fmt --check
	go vet ./...
	go tool staticcheck ./...
	$(FORGE) fmt --check

# Every Go fuzz target, briefly (FUZZTIME each): the seed corpus runs in test-go already; this
# explores a little past it, so a parser that panics on new input fails the build.
FUZZTIME ?= 2s

test-fuzz: tools ## run every Go fuzz target for FUZZTIME (scripts/fuzz-smoke)
	FUZZTIME=$(FUZZTIME) $(FUZZ_NICE) scripts/fuzz-smoke

# The TypeScript client (clients/ts): its packages installed by npm ci when its lock changes
# (stamped), then tsc and node --test (unit tests, the Go fixtures, every conformance vector),
# whose TAP summary is printed. The Go e2e test TestTypeScriptAgentsMoneyPath uses the same
# install.
TS_DIR   := clients/ts
TS_STAMP := $(TS_DIR)/node_modules/.installed

$(TS_STAMP): $(TS_DIR)/package.json $(TS_DIR)/package-lock.json
	@command -v npm >/dev/null || { echo "make: npm (Node.js 20+) is required for clients/ts"; exit 1; }
	cd $(TS_DIR) && npm ci --no-audit --no-fund --loglevel=error
	@touch $@

test-ts: $(TS_STAMP) ## the TypeScript client's tests (tsc + node --test)
	@log=$$(mktemp); if (cd $(TS_DIR) && npm test --silent) >"$$log" 2>&1; then \
		grep -E '^# (tests|pass|fail|skipped)' "$$log"; rm -f "$$log"; \
	else cat "$$log"; rm -f "$$log"; exit 1; fi

# The explorer's verification code (explorer/web/src/lib: Merkle proofs and scores recomputed
# in the browser, envelope signatures) under node --test, held to vectors reputation's
# TestJSVectors writes from the Go code and to testdata/conformance/envelope.
test-explorer-lib: $(WEB_STAMP) ## the explorer's lib/merkle.js, score.js and envelope.js against the Go vectors (node --test)
	@command -v node >/dev/null || { echo "make: node (Node.js 20+) is required for the explorer's tests"; exit 1; }
	node --test explorer/web/test/*.test.mjs

test-forge: tools
	FOUNDRY_PROFILE=$(FORGE_PROFILE) $(FORGE) test
	FOUNDRY_PROFILE=default $(FORGE) snapshot --check

# The Python client (clients/python): standard library and `cryptography` only, offline, in
# seconds; it runs testdata/conformance too. Its money path against a node runs in test-go
# (testnet/e2e TestPythonClientMoneyPath).
test-python: ## run the Python client's tests
	PYTHONDONTWRITEBYTECODE=1 python3 -m unittest discover -s clients/python/tests -t clients/python/tests -v

# SURETY_TEST_BIN_DIR: the surety binary that cmd/surety's and testnet/e2e's node processes run
# is built once for the whole run there (testutil.Binary), not once per package. The two
# packages whose tests mostly wait (testnet/e2e's networks of node processes, cmd/surety's
# nodes on slow chains: 2–3 minutes each) are named first, so that go test starts them first,
# and -p 3 runs the other packages beside them in a third slot, where the default (GOMAXPROCS,
# 2 in CI) would queue them behind. -ldflags=-w links the test binaries without DWARF, which
# no test reads: a link takes half the time (about 9 s → 4.7 s for api's), and the step is
# CPU-bound on 2 cores.
GO_TEST_FIRST := ./testnet/e2e ./cmd/surety

test-go: tools $(TS_STAMP) # the TypeScript client's packages: testnet/e2e runs it
	bin=$$(mktemp -d); trap 'rm -rf "$$bin"' EXIT; \
	SURETY_TEST_BIN_DIR="$$bin" go tool gotestsum --format standard-quiet -- -count=1 -p 3 -ldflags=-w $(GO_TEST_FIRST) ./...

# make bench runs every benchmark (Go and forge snapshot) and writes one table, bench/RESULTS.md
# (printed too), pairing each figure with a reference measured in the same run. The heavy Go
# benchmarks (seconds of setup, their own inner loops of thousands) run once; the others for
# BENCHTIME. -p 1: no test binary links while another one is being measured. Raw outputs stay
# in bench/*.txt; the gas snapshot goes there too, never over the committed .gas-snapshot.
BENCH_HEAVY := Register|HybridIndex|RegisterLarge|RegisterHTTP|AgentsThroughput|Search|Relevance|NodeMemory|CapabilitySearchUnseenTag|SemanticSearch|SemanticBuild|Propagation20|ReputationQuery|Recompute|IndexerCatchUp|PostRoundTrip|ChurnConvergence|PartitionConvergence|PublicNodeLoad
BENCHTIME   ?= 1s
# make bench also runs TestChurn long (make test runs it for a minute): CHURN_LONG of kills and
# restarts of 8 node processes under writes (78 kills in 4 minutes on a quiet machine).
CHURN_LONG  ?= 4m

bench: tools ## run every benchmark (Go, forge snapshot); write bench/RESULTS.md with references and ratios
	@mkdir -p bench
	FOUNDRY_PROFILE=default $(FORGE) snapshot --snap bench/gas.txt > bench/forge.txt || { tail -30 bench/forge.txt; exit 1; }
	@cmp -s .gas-snapshot bench/gas.txt || echo "make bench: gas differs from .gas-snapshot (diff .gas-snapshot bench/gas.txt; make contracts refreshes it)"
	go test -p 1 -run '^$$' -bench '^Benchmark($(BENCH_HEAVY))$$' -benchtime 1x -benchmem ./... | tee bench/go.txt
	go test -p 1 -run '^$$' -bench . -skip '^Benchmark($(BENCH_HEAVY))$$' -benchtime $(BENCHTIME) -benchmem ./... | tee -a bench/go.txt
	SURETY_CHURN=$(CHURN_LONG) go test -count=1 -run '^TestChurn$$' -v ./testnet/e2e > bench/churn.txt 2>&1 || { tail -40 bench/churn.txt; exit 1; }
	@grep -E 'churn over|converged' bench/churn.txt
	go run ./internal/benchtable/cmd/benchtable -go bench/go.txt -gas bench/gas.txt -out bench/RESULTS.md -commit $(VERSION)

# make bench-large runs the benchmarks that take their size from the environment at the sizes
# issue 31 sets targets for: 1M cards (search, its index, the semantic index), 1M agents and 10M
# audits (reputation: load, recomputation, queries; bare Compute as the reference), and a
# node's registry and reputation holding both (peak RSS). About an hour and ~8 GB of memory on
# two cores; it writes bench/RESULTS-large.md.
BENCH_LARGE := Search|IndexBuild|SemanticSearch|ReputationQuery|Recompute|NodeMemory
bench-large: tools ## the 1M-card / 10M-audit benchmarks (about an hour); write bench/RESULTS-large.md
	@mkdir -p bench
	SURETY_BENCH_CARDS=1000000 SURETY_BENCH_AUDITS=10000000 SURETY_BENCH_SCALE=10 \
		go test -p 1 -run '^$$' -bench '^Benchmark($(BENCH_LARGE))$$' -benchtime 1x -timeout 4h ./registry ./registry/semantic ./reputation ./node | tee bench/go-large.txt
	go test -p 1 -run '^$$' -bench '^BenchmarkSQLiteRead$$' ./internal/benchref | tee -a bench/go-large.txt
	go run ./internal/benchtable/cmd/benchtable -spec large -go bench/go-large.txt -gas '' -out bench/RESULTS-large.md -commit $(VERSION)

contracts: tools ## after a Solidity change: rebuild, refresh artifacts, bindings and the gas snapshot
	$(FORGE) build
	go run ./contracts/internal/bindgen/cmd/bindgen -root . -forge-out out
	FOUNDRY_PROFILE=default $(FORGE) snapshot

# The semantic model (registry/semantic/wordnet.model.gz, committed and embedded) is trained
# from WordNet 3.0 as Debian's wordnet-base installs it; where it is missing, the package is
# installed with apt-get, non-interactively (as root, or through sudo). Training depends on
# nothing else, so the drift test (TestModelIsTrained, skipped without WordNet) holds the
# committed file to it; make tools installs WordNet, so make test runs that check.
$(WORDNET)/data.noun:
	@if ! command -v apt-get >/dev/null; then \
		echo "make: WordNet 3.0 is missing in $(WORDNET) and there is no apt-get: install Debian's wordnet-base (or WordNet 3.0's dict files there)"; exit 1; \
	fi
	@echo "make: installing Debian's wordnet-base for the semantic model's drift check (apt-get update; apt-get install wordnet-base)"
	$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get update -qq
	$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends wordnet-base

semantic-model: $(WORDNET)/data.noun ## retrain the semantic model from Debian's WordNet (installs wordnet-base if missing) and check it
	go run ./registry/semantic/internal/train -wordnet $(WORDNET) -out registry/semantic/wordnet.model.gz
	go test ./registry/semantic -run '^(TestModelIsTrained|TestDefaultLoads|TestSimilarPairsBeatRandom)$$' -count=1 -v | grep -E '^(---|ok|FAIL)|similar: mean'

clean: ## remove build outputs (keeps .tools/ and data dirs)
	rm -rf bin out cache
