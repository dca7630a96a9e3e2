# agentgate — build, run, test, benchmark and package.
#
#   make run    install what is missing, build, start the desktop app
#   make test   install what is missing, then vet, every test, cross-OS checks
#               (test-agents: the real Claude Code, Gemini CLI and Codex, from npm)
#   make bench  benchmarks with ratios against baselines measured in the same run
#
# Fyne's first cgo build takes about five minutes on two cores; the Go build
# cache keeps it afterwards, so never clean it.

SHELL    := /bin/bash
GO       ?= go
# migrated_fynedo is the tag `fyne build` sets for [Migrations] fyneDo = true;
# every Go command here uses the same tags so the cgo build is shared.
TAGS     := migrated_fynedo
# Every Go command here runs in the workspace bin/go.work, which replaces
# Fyne with a copy whose event loop polls at 2 Hz instead of 60 Hz while no
# window is visible (scripts/fyne-work.sh, scripts/fyne-idle-loop.patch): the
# app at rest otherwise spends 2 % of a core on it. Empty (Fyne as it is,
# said on stderr) when the patch cannot be applied.
export GOWORK := $(shell scripts/fyne-work.sh)
BIN      := bin/agentgate
# The lean hook and MCP executables (see ARCHITECTURE.md): static, no Fyne, no cgo.
HOOKBIN  := bin/agentgate-hook
MCPBIN   := bin/agentgate-mcp
# The confinement shim (Linux; docs/lifetime.md): a small static C program
# that applies a run's confinement between fork and exec.
SHIMBIN  := bin/agentgate-shim
# musl-gcc when installed (scripts/deps.sh installs musl-tools): a static
# musl shim starts in a tenth of the time a static glibc one takes, and it
# runs before every confined run's program (BENCHMARKS.md). Deferred (=, not
# :=) so that it is looked up when the recipe runs, after `deps` installed
# musl-tools on a fresh machine, not when make reads this file.
SHIMCC    = $(or $(filter-out cc,$(CC)),$(shell command -v musl-gcc 2>/dev/null),cc)
export LANG := C.UTF-8
# The version lives in one place, FyneApp.toml; the commit comes from git.
VERSION  := $(shell awk -F'"' '/^\[/{s=$$0} s=="[Details]" && /^Version[ \t]*=/{print $$2; exit}' FyneApp.toml)
COMMIT   := $(shell git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
LDFLAGS  := -X github.com/agentgate/agentgate/cli.version=$(VERSION) -X github.com/agentgate/agentgate/cli.commit=$(COMMIT)

# Every package but the UI (package ui, the Fyne views) and the root (which
# links the UI): these need no cgo, run under -race, and must compile for
# Windows and macOS. ui/model, the windows' models, is one of them.
NONUI     = $(shell $(GO) list ./... | grep -v -e '/ui$$' -e '^github.com/agentgate/agentgate$$')

.PHONY: all deps build run test vet nofyne test-nonui test-windows test-ui test-agents agents-table cross bench bench-against screenshots fuzz package package-check validate-packaging clean-bin

all: build

deps:
	@scripts/deps.sh

# settle rewrites an executable the Go linker just wrote with plain writes,
# as installing it would. The linker writes through a memory mapping, which
# leaves the file in the page cache as 4 KiB pages; on Linux with ext4 a
# file written with write(2) is cached in large folios, and executing it
# takes fewer page faults — the hook, run before every tool call, used a
# fifth less CPU (BENCHMARKS.md, also for executables read back from disk).
settle = cp $(1) $(1).settle && mv -f $(1).settle $(1)

build: deps
	$(GO) build -tags $(TAGS) -ldflags "$(LDFLAGS)" -o $(BIN) .
	CGO_ENABLED=0 $(GO) build -ldflags "$(LDFLAGS)" -o $(HOOKBIN) ./cmd/agentgate-hook
	CGO_ENABLED=0 $(GO) build -ldflags "$(LDFLAGS)" -o $(MCPBIN) ./cmd/agentgate-mcp
	$(call settle,$(BIN)); $(call settle,$(HOOKBIN)); $(call settle,$(MCPBIN))
	if [ "$$(uname -s)" = Linux ]; then $(SHIMCC) -static -O2 -Wall -Wextra -o $(SHIMBIN) cmd/agentgate-shim/shim.c; fi

run: build
	@scripts/run.sh $(BIN)

test: deps vet nofyne validate-packaging cross test-nonui test-windows test-ui test-agents
	@echo "make test: vet, packaging, cross-OS checks and every test passed"
	@echo "packages: $$(cat bin/test-nonui.log bin/test-ui.log bin/test-agents.log | grep -c '^ok ') passed, 0 failed"
	@echo "windows: $$(grep '^Windows total' bin/test-windows-summary.txt)"

vet:
	$(GO) vet -tags $(TAGS) ./...

# Only ui/ and the root may link Fyne (ARCHITECTURE.md): no package of
# NONUI may have a fyne.io package among its dependencies.
nofyne:
	@bad=$$($(GO) list -deps -f '{{.ImportPath}}' $(NONUI) | grep '^fyne\.io/' || true); \
	if [ -n "$$bad" ]; then \
	  echo "nofyne: a package outside ui/ links Fyne; only ui/ may:"; \
	  for p in $(NONUI); do $(GO) list -deps $$p | grep -q '^fyne\.io/' && echo "  $$p"; done; \
	  exit 1; \
	fi; echo "nofyne: no package outside ui/ links Fyne"

# Each test target keeps its go test output in bin/ for the closing count.
test-nonui:
	@mkdir -p bin
	set -o pipefail; $(GO) test -race -count=1 -timeout 20m $(filter-out %/cli/agente2e,$(NONUI)) 2>&1 | tee bin/test-nonui.log

# The Windows tests of every non-cgo package, run under Wine 8 (installed
# with apt when missing; prefix and overlaid standard library cached in
# ${XDG_CACHE_HOME:-$HOME/.cache}/agentgate-test/wine, so only the first
# run pays a few minutes): a table of tests ran, passed and skipped per
# package. What Wine cannot host skips with its reason (docs/lifetime.md).
test-windows:
	scripts/test-windows.sh $(NONUI)

test-ui: build
	set -o pipefail; scripts/with-xvfb.sh $(GO) test -tags $(TAGS) -count=1 -timeout 20m ./ui 2>&1 | tee bin/test-ui.log

# The real agent CLIs — Claude Code, Gemini CLI, Codex at the versions pinned
# in prefs/agents — driven against fake model servers with agentgate wired in
# by `agentgate setup`, under a private Xvfb (the card is clicked with
# xdotool, the TUIs typed at through tmux). npm installs them once into
# $${XDG_CACHE_HOME:-$$HOME/.cache}/agentgate-test/npm. The runs mostly wait,
# so they run six at a time. The table of what each agent did must match
# docs/integrations.md; agents-table rewrites it from a run.
test-agents: deps
	@mkdir -p bin
	set -o pipefail; scripts/with-xvfb.sh $(GO) test -count=1 -parallel 6 -timeout 30m ./cli/agente2e 2>&1 | tee bin/test-agents.log

agents-table: deps
	scripts/with-xvfb.sh $(GO) test -count=1 -parallel 6 -timeout 30m ./cli/agente2e -args -write-table

# Windows and macOS compile checks: vet and test binaries of every non-cgo package.
cross:
	@set -e; for os in windows darwin; do \
	  echo "cross: GOOS=$$os go vet + go test -c"; \
	  GOOS=$$os CGO_ENABLED=0 $(GO) vet $(NONUI); \
	  for p in $(NONUI); do GOOS=$$os CGO_ENABLED=0 $(GO) test -c -o /dev/null $$p >/dev/null; done; \
	done

bench: build
	scripts/bench.sh

# Did a benchmark regress since REV? Both builds alternated on this machine
# now (scripts/bench-against.sh), e.g. make bench-against REV=6c3ec84.
bench-against:
	scripts/bench-against.sh $(REV) $(or $(ROUNDS),3)

# Retakes the README's screenshots (docs/*.png) from the real app with demo
# content, under a private Xvfb.
screenshots: build
	scripts/screenshots.sh docs

fuzz:
	scripts/fuzz.sh

validate-packaging: deps
	scripts/validate-packaging.sh

# The Linux archive through `fyne package` (dist/), then an install into a
# temporary prefix whose binary must answer --version.
package: deps
	VERSION=$(VERSION) COMMIT=$(COMMIT) scripts/package.sh

package-check: package
	scripts/package-check.sh

clean-bin:
	rm -rf bin
