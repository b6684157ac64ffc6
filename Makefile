# kubeproof's two entry points for a newcomer (see README.md):
#   make run    the main job: bring up the default local cluster, run every
#               suite, print the report, bring the cluster down
#   make test   unit tests, then the same suites on a fresh local cluster and
#               on a fresh 3-node kind cluster
# Both need root (the local cluster creates a network namespace, cgroups and
# mounts) and install what they need on first use (Debian packages, then
# Kubernetes and etcd built from Go modules into ~/.cache/kubeproof).

GO         ?= go
BIN        := _output/bin
REPORT_DIR ?= _output/report
VERSION    ?= $(shell git describe --always --dirty 2>/dev/null || echo dev)
COMMIT     ?= $(shell git rev-parse HEAD 2>/dev/null)$(shell git diff --quiet HEAD 2>/dev/null || echo -dirty)
KUBEPROOF  := $(BIN)/kubeproof
BUILDINFO  := github.com/kubeproof/kubeproof/internal/buildinfo
# The programs packed into images (those of cmd/, and the node programs
# behind provisioning's door) are built without version stamps (nor VCS
# data): an unchanged program gives the same binary at every commit, so image
# caches keyed on it (the kind node image among them) stay valid.
PROGRAMS   := $(addprefix ./,$(filter-out cmd/kubeproof,$(patsubst %/,%,$(dir $(wildcard cmd/*/main.go internal/provision/cmd/*/main.go)))))
GOFLAGS_BUILD := -trimpath -buildvcs=false
# Flags for `kubeproof run`: specs run in 4 processes (they are written to
# be safe in parallel; this also proves it). E.g. RUN_FLAGS="--document 003 -v".
RUN_FLAGS  ?= --parallel 4

.PHONY: static action quickstart all build release release-check run test unit browser lint e2e e2e-kind e2e-restricted e2e-example e2e-cgroup2 test-kind faults faults-ci interrupt incluster rounds bench matrix prepare down down-all clean junit-readers

all: build

## build: the kubeproof CLI and the programs packed into its images
build:
	CGO_ENABLED=0 $(GO) build $(GOFLAGS_BUILD) -ldflags "-s -w" -o $(BIN)/ $(PROGRAMS)
	CGO_ENABLED=0 $(GO) build $(GOFLAGS_BUILD) -ldflags "-s -w -X $(BUILDINFO).version=$(VERSION) -X $(BUILDINFO).commit=$(COMMIT)" -o $(BIN)/ ./cmd/kubeproof

## run: the main job
run: build
	$(KUBEPROOF) run --provider local --report-dir $(REPORT_DIR) $(RUN_FLAGS)

## test: unit tests, the report in a browser (browser), then the suites on a local cluster and on a kind cluster
## made for the occasion, the Raft majority spec on a local cluster with three
## etcd members, the local provider on cgroup v2 (two guests), then the fault
## matrix's CI subset, run --in-cluster (incluster), the GitHub Action and
## the CI recipes under act, the README's quick starts as written; last, the
## JUnit reports of those runs read by CI readers' parsers, and a snapshot of
## the release checked as its users get it (release-check: the archives,
## checksums, the krew manifest, the installed plugin on a cluster, and more).
test: static e2e e2e-kind e2e-quorum e2e-restricted e2e-example e2e-cgroup2 faults-ci interrupt registry incluster release-check action quickstart junit-readers
# The readers read the reports make test has just written, too.
test: JUNIT_REPORTS += $(REPORT_DIR) $(REPORT_DIR)-kind $(REPORT_DIR)-quorum $(REPORT_DIR)-restricted

## test-kind: the suites on a kind cluster only
test-kind: e2e-kind

## static: lint, unit and browser at once, none of which needs a cluster
## (each target's output printed whole when it ends): about 90 s instead
## of 136 s one after the other, measured here
static:
	$(MAKE) --no-print-directory --output-sync=target -j3 lint unit browser

unit:
	$(GO) test ./...

## browser: claims.html of a real run's report (internal/report/testdata)
## rendered by headless Chromium at 1280 and 1400 px and as printed (A4
## landscape); fails when the page is wider than its window, a column is
## narrower than its minimum or a cell's content spills. Installs Debian's
## chromium and fonts-nanum when they are missing. The page and screenshots
## (the top of the page, the document view) are kept in BROWSER_DIR.
BROWSER_DIR ?= _output/browser
browser:
	mkdir -p $(BROWSER_DIR)
	$(GO) test -tags browser -count=1 -run TestReportInBrowser -v ./internal/report -args -browser.out=$(abspath $(BROWSER_DIR))

## lint: gofmt, go vet (with the e2e tag too, and for darwin: the CLI builds
## for a Mac, and the tests of what it does there compile), go mod tidy,
## actionlint on the GitHub Actions recipe and the release workflow,
## goreleaser check, golangci-lint (.golangci.yml); the linters and goreleaser
## are built from their Go modules into _output/tools
TOOLS          := _output/tools
ACTIONLINT     := $(TOOLS)/actionlint
GOLANGCI_LINT  := $(TOOLS)/golangci-lint
$(ACTIONLINT):
	GOBIN=$(abspath $(TOOLS)) $(GO) install github.com/rhysd/actionlint/cmd/actionlint@v1.7.12
$(GOLANGCI_LINT):
	GOBIN=$(abspath $(TOOLS)) $(GO) install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@v2.15.0
# goreleaser makes the release (.goreleaser.yaml); v2.17.0 is the newest that
# builds with the Go of go.mod.
GORELEASER     := $(TOOLS)/goreleaser
$(GORELEASER):
	GOBIN=$(abspath $(TOOLS)) $(GO) install github.com/goreleaser/goreleaser/v2@v2.17.0
# goreleaser wants the repository's remote; a checkout without one (a
# worktree, a copy) is given GitHub's as git configuration in the
# environment, which changes no file.
RELEASE_GIT    := $(if $(shell git remote get-url origin 2>/dev/null),,GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=remote.origin.url GIT_CONFIG_VALUE_0=https://github.com/kubeproof/kubeproof.git)
# nektos/act runs GitHub Actions workflows on this machine (make action).
ACT            := $(TOOLS)/act
$(ACT):
	GOBIN=$(abspath $(TOOLS)) $(GO) install github.com/nektos/act@v0.2.89

lint: $(ACTIONLINT) $(GOLANGCI_LINT) $(GORELEASER)
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) vet -tags e2e ./suites/... ./cmd/... ./internal/runner ./internal/tools/incluster
	$(GO) vet -tags browser ./internal/report
	GOOS=darwin GOARCH=arm64 $(GO) vet ./...
	$(GO) mod tidy -diff
	ci/actionlint.sh $(ACTIONLINT)
	$(RELEASE_GIT) $(GORELEASER) check
	$(GOLANGCI_LINT) run ./...

e2e: build
	$(KUBEPROOF) run --provider local --report-dir $(REPORT_DIR) $(RUN_FLAGS)

## e2e-quorum: the spec that needs etcd as three members (a Raft majority),
## on a local cluster made so; the default cluster has one member
e2e-quorum: build
	$(KUBEPROOF) run --provider local --etcd-members 3 --focus 'three etcd members' --report-dir $(REPORT_DIR)-quorum $(RUN_FLAGS)

## e2e-restricted (after e2e, whose report it compares with): the suites on a
## hardened local cluster, whose API server
## enforces the restricted Pod Security Standard by default; the verdicts
## must be those of `make e2e` (timing aside): kubeproof's Pods pass
## restricted, and the one spec that needs more labels its namespace.
e2e-restricted: build
	$(KUBEPROOF) run --provider local --admission-control-config-file fixtures/admission/podsecurity-restricted.yaml --report-dir $(REPORT_DIR)-restricted $(RUN_FLAGS)
	$(KUBEPROOF) report diff $(REPORT_DIR) $(REPORT_DIR)-restricted

## e2e-example: the worked examples of docs/examples (pod-lifecycle,
## deployment-rollout), documents checked from their claims files alone
## (probes): every testable sentence must be decided on a local cluster
e2e-example: build
	ci/example.sh local

## e2e-cgroup2: the local provider on machines with cgroup v2 alone, as
## today's Linux distributions and CI runners mount it: user-mode-linux
## guests of this machine (ci/cgroup2; the host's root read-only beneath an
## overlay, Debian's kernel package installed on first use), one with a
## plain init (the cgroupfs driver, as in a container) and one booted by
## systemd (the systemd driver, as on Ubuntu 24.04). A focused set of specs
## runs on this machine and in the first guest (one CPU: minutes); the
## systemd guest runs those of them whose Pods and containers the kubelet
## puts in cgroups (a Pod, its sandbox, its limits, a restart), since
## namespaces, seccomp, the CRI calls, the network and the controllers do
## not see the cgroup driver. `report
## diff` then lists any verdict that differs among the runs that ran it,
## timing aside. The guests' mounts, cgroup controllers and reports are in
## CGROUP2_DIR.
CGROUP2_RUNTIME_SPECS ?= spec:podflow-create || spec:kubelet-probes || spec:kubelet-cgroups || spec:kubelet-sandbox
CGROUP2_SPECS ?= $(CGROUP2_RUNTIME_SPECS) || spec:kubelet-isolation || spec:kubelet-cri || spec:kubelet-seccomp || \
                 spec:network-readiness || spec:network-cni-calls || spec:network-pod-ips || spec:controllers-cascade
CGROUP2_DIR   ?= $(abspath $(REPORT_DIR))-cgroup2
# A guest has one CPU: two spec processes keep it busy.
CGROUP2_RUN_FLAGS ?= --parallel 2
CGROUP2_GUEST  = $(TOOLS)/cgroup2 --results $(CGROUP2_DIR)/$(1) $(2) -- \
	$(abspath $(KUBEPROOF)) run --provider local --label-filter '$(3)' --report-dir $(CGROUP2_DIR)/$(1)/report $(CGROUP2_RUN_FLAGS)
$(TOOLS)/cgroup2: FORCE
	CGO_ENABLED=0 $(GO) build $(GOFLAGS_BUILD) -o $@ ./ci/cgroup2
FORCE:
e2e-cgroup2: build $(TOOLS)/cgroup2
	@# The unit tests that need a cgroup v2 root (skipped on this machine).
	mkdir -p $(CGROUP2_DIR)/unit
	$(GO) test -c -o $(CGROUP2_DIR)/unit/hostchange.test ./internal/provision/internal/hostchange
	$(TOOLS)/cgroup2 --results $(CGROUP2_DIR)/unit --no-report -- $(CGROUP2_DIR)/unit/hostchange.test -test.v -test.run 'Cgroup|Subtree|Modules'
	$(TOOLS)/cgroup2 --results $(CGROUP2_DIR)/unit --no-report --systemd -- $(CGROUP2_DIR)/unit/hostchange.test -test.v -test.run 'Cgroup|Subtree|Modules'
	$(KUBEPROOF) run --provider local --label-filter '$(CGROUP2_SPECS)' --report-dir $(CGROUP2_DIR)/host $(CGROUP2_RUN_FLAGS)
	$(call CGROUP2_GUEST,guest-cgroupfs,,$(CGROUP2_SPECS))
	$(call CGROUP2_GUEST,guest-systemd,--systemd,$(CGROUP2_RUNTIME_SPECS))
	$(KUBEPROOF) report diff --ignore-not-run $(CGROUP2_DIR)/host $(CGROUP2_DIR)/guest-cgroupfs/report $(CGROUP2_DIR)/guest-systemd/report

# kind: with no Docker engine on the machine, kubeproof starts its private
# daemon (installing Debian's docker.io) and stops it again with the cluster;
# the first run also builds the node image (debootstrap, Kubernetes images).
e2e-kind: build
	$(KUBEPROOF) run --provider kind --report-dir $(REPORT_DIR)-kind $(RUN_FLAGS)

## faults: kubeproof's own fault matrix (fixtures/faults.yaml): the suites on a
## healthy local cluster and on one broken on purpose per fault, each checked
## against the verdicts the matrix lists. Slow (a run per fault); CI runs the
## subset marked ci, against the healthy run of `make e2e`, each fault running
## only the specs behind the claims it lists (--focused: about 5 minutes for
## the three instead of 11).
FAULTS_DIR ?= _output/faults
faults: build
	$(KUBEPROOF) faults --report-dir $(FAULTS_DIR)

faults-ci: build
	$(KUBEPROOF) faults --ci --focused --baseline $(REPORT_DIR) --report-dir $(FAULTS_DIR)-ci

## interrupt: runs stopped while their specs run (SIGINT, SIGTERM, two
## SIGINTs, SIGKILL then down): exit code, time to exit, partial report,
## nothing left on the machine
interrupt: build
	$(GO) test -tags e2e -count=1 -run 'TestInterrupt|TestDryRun' -v ./internal/runner

## incluster: run --in-cluster on a local cluster reached through its
## kubeconfig only (its nodes pull from a registry served here): the
## report copied back, the verdicts of a run from outside except claims
## whose reason names a capability the two differ in, nothing left after a
## run, a Ctrl-C or two; bad input on a real cluster (no RBAC, credentials
## refused, a context that does not exist, a registry that does not answer)
incluster: build
	$(GO) test -tags e2e -count=1 -timeout 90m -run TestInCluster -v ./internal/tools/incluster

## registry: a cluster kubeproof made, checked as one it did not: its nodes
## pull kubeproof's images from a registry served here, the suites reach it
## through a kubeconfig only (ci/registry.sh; PROVIDER=kind for kind)
registry: build
	ci/registry.sh $(PROVIDER)

## junit-readers: claims-junit.xml and junit.xml read by the parsers the
## common CI readers are built on (npm xml-js as mikepenz/action-junit-report
## uses it, npm xml2js as dorny/test-reporter does, Debian's
## python3-junitparser as EnricoMi/publish-unit-test-result-action does):
## each must count the tests, failures, errors and skips claims.json says,
## also for a copy judged again with --junit-refuted-as failure. The npm
## packages are installed from ci/junit-readers/package-lock.json into the
## cache directory once, the Debian package once. JUNIT_REPORTS are the report
## directories: reports of real runs kept in ci/junit-readers/testdata, and
## under make test the reports its runs wrote.
JUNIT_REPORTS ?= $(patsubst %/claims.json,%,$(wildcard ci/junit-readers/testdata/*/claims.json))
$(TOOLS)/junitreaders: FORCE
	CGO_ENABLED=0 $(GO) build $(GOFLAGS_BUILD) -o $@ ./ci/junitreaders
junit-readers: build $(TOOLS)/junitreaders
	$(TOOLS)/junitreaders --kubeproof $(KUBEPROOF) $(JUNIT_REPORTS)

## action: kubeproof's GitHub Action (action.yml) and the recipes of
## docs/ci run by nektos/act on this machine, as GitHub's runners run them
## (ci/actcheck): a documentation repository's lint job (and lint's exit
## code on a broken file), the action from a checkout (built with Go), the
## install step pinned at a release through its own path (and a tampered
## checksum refused), docs/ci/cluster.yml against a local cluster through
## its kubeconfig (a quoted label filter; a refuted claim, with and without
## --fail-on-refuted; a claim in error), and docs/ci/matrix.yml for one
## release on local and kind, joined by report merge. The release the
## recipes pin is a stand-in: this checkout built (make build) as
## ACTION_VERSION, packed as a release packs it (kubeproof and its images'
## programs at the archive's top, SHA256SUMS), served on 127.0.0.1; remote
## actions are ci/act/stubs.
## ACTION_CHECKS narrows it (e.g. lint,install). Logs in ACTION_DIR/runs.
ACTION_DIR     ?= _output/action
ACTION_VERSION ?= v0.1.0
ACTION_CHECKS  ?=
$(TOOLS)/actcheck: FORCE
	CGO_ENABLED=0 $(GO) build $(GOFLAGS_BUILD) -o $@ ./ci/actcheck
action: build $(ACT) $(TOOLS)/actcheck
	rm -rf $(ACTION_DIR)/stage $(ACTION_DIR)/release && mkdir -p $(ACTION_DIR)/release/$(ACTION_VERSION)
	$(MAKE) --no-print-directory build BIN=$(ACTION_DIR)/stage VERSION=$(ACTION_VERSION)
	cp README.md LICENSE $(ACTION_DIR)/stage/
	tar -C $(ACTION_DIR)/stage --sort=name --owner=0 --group=0 --numeric-owner -czf \
	  $(ACTION_DIR)/release/$(ACTION_VERSION)/kubeproof-$(ACTION_VERSION)-linux-$$($(GO) env GOARCH).tar.gz .
	cd $(ACTION_DIR)/release/$(ACTION_VERSION) && sha256sum *.tar.gz > SHA256SUMS
	$(TOOLS)/actcheck --act $(ACT) --kubeproof $(KUBEPROOF) --release $(ACTION_DIR)/release --version $(ACTION_VERSION) \
	  --out $(ACTION_DIR)/runs $(if $(ACTION_CHECKS),--only $(ACTION_CHECKS))

## quickstart: the README's quick starts run as a newcomer types them
## (ci/quickstart): "check my cluster" against a local cluster through
## $HOME/.kube/config, "check my document" (claims new, lint, run) in an
## empty directory, and the CI one's lines found in the recipe make action
## runs. Logs in _output/quickstart.
$(TOOLS)/quickstart: FORCE
	CGO_ENABLED=0 $(GO) build $(GOFLAGS_BUILD) -o $@ ./ci/quickstart
quickstart: build $(TOOLS)/quickstart
	$(TOOLS)/quickstart --bin $(BIN) --out _output/quickstart

## rounds: ROUNDS runs in a row on PROVIDER, and the verdicts that differ
ROUNDS   ?= 10
PROVIDER ?= local
rounds: build
	ci/rounds.sh $(ROUNDS) $(PROVIDER)

## bench: measurements only, written to _output/bench/bench.{json,md}: the
## local and kind clusters' up and down times, pod startup latency (50 Pods),
## the suites' cost on the local cluster at --parallel 4 and 1, then
## `make run` timed whole, warm and once cold (empty kubeproof and Go build
## caches, which rebuilds Kubernetes): about 45 minutes on 2 cores.
## BENCH_FLAGS narrows it, e.g. BENCH_FLAGS="--rounds 3" (local only, no
## end-to-end rows), or adds --rounds 3 to BENCH_ALL.
BENCH_DIR   := _output/bench
BENCH_ALL   := --providers local,kind --suites-providers local --parallel 4,1 \
               --end-to-end '$(MAKE) --no-print-directory run REPORT_DIR=$(BENCH_DIR)/end-to-end' \
               --end-to-end-name 'make run' --cold
BENCH_FLAGS ?= $(BENCH_ALL)
bench: build
	$(KUBEPROOF) bench --report-dir $(BENCH_DIR) $(BENCH_FLAGS)

## matrix: the suites on each Kubernetes release kubeproof is tested with, on
## local clusters one after another; verdicts side by side in
## _output/matrix/matrix.{md,html,json} (docs/versions.md)
MATRIX_VERSIONS ?= v1.34.4,v1.35.4,v1.36.3,v1.37.2
matrix: build
	$(KUBEPROOF) matrix --kubernetes-versions $(MATRIX_VERSIONS) --report-dir _output/matrix $(RUN_FLAGS)

## release: the release of the tag at HEAD, as .github/workflows/release.yml
## makes it (goreleaser, .goreleaser.yaml): the images the specs run pushed to
## $KUBEPROOF_RELEASE_REGISTRY (one index of linux/amd64 and linux/arm64 each,
## tagged with the version), then archives for linux and darwin, amd64 and
## arm64, SHA256SUMS and the krew manifest, published as a GitHub release
## ($GITHUB_TOKEN). RELEASE_FLAGS=--snapshot makes one of any commit without
## publishing it (the images are still pushed when a registry is named).
RELEASE_FLAGS ?=
release: $(GORELEASER)
	$(RELEASE_GIT) $(GORELEASER) release --clean $(RELEASE_FLAGS)

## release-check: a snapshot of the release checked as its users get it
## (ci/release-check.sh): its archives for the four platforms and their
## checksums, the krew manifest installing the plugin, the images pushed to a
## registry served here (standing in for the public one, and stamped into
## the snapshot as the release's), then the installed `kubectl kubeproof run`,
## with no provider flag, against a local cluster reached through its
## kubeconfig alone and whose node has none of kubeproof's images; last, a
## kubeproof `go install`ed from a module proxy of this commit runs the images
## it needs
KREW          := $(TOOLS)/krew
$(KREW):
	GOBIN=$(abspath $(TOOLS)) $(GO) install sigs.k8s.io/krew/cmd/krew@v0.4.3
# release-check's kubeconfig-only run must decide at least
# RELEASE_MIN_DECIDED percent of the claims (ci/release-check.sh): a floor
# just under what it decides (54%, 134 of 250, with the API's and kubectl's
# readings), so that a reading lost or a capability wrongly missing fails
# the tests. What it leaves undecided needs what a kubeconfig does not give
# (the audit log, etcd, the nodes, component flags, a registry to push to):
# docs/your-cluster.md, section 5.
release-check: build $(GORELEASER) $(KREW)
	$(RELEASE_GIT) ci/release-check.sh $(GORELEASER) $(KREW)

## prepare: install host packages and build binaries and images, no cluster
prepare: build
	$(KUBEPROOF) prepare

## down: remove the default local and kind clusters, the private Docker
## daemon, and what they left behind
down: build
	$(KUBEPROOF) down
	$(KUBEPROOF) down --provider kind
	$(KUBEPROOF) dockerd stop

## down-all: every cluster kubeproof made on this machine, also ones a killed
## run left (CI starts with it: a runner killed mid-job keeps its routes)
down-all: build
	$(KUBEPROOF) down --all
	$(KUBEPROOF) down --provider kind --all
	$(KUBEPROOF) dockerd stop

clean:
	rm -rf _output
