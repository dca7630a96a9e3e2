#!/usr/bin/env bash
# screenshots.sh refreshes the screenshots in docs/ (light and dark theme):
# the real app (bin/agentgate, from `make build`) under a private Xvfb, with
# a demo home directory and project, driven by ui.TestScreenshots, which is
# built as <demo home>/.local/bin/claude so the card names a real agent
# process. Usage: scripts/screenshots.sh [output dir, default docs]
set -euo pipefail
cd "$(dirname "$0")/.."
# The workspace with Fyne's patched event loop, as the Makefile uses it.
export GOWORK="${GOWORK-$(scripts/fyne-work.sh)}"
out="$(cd "${1:-docs}" && pwd)"
[ -x bin/agentgate ] || { echo "screenshots.sh: bin/agentgate is missing: run make build first" >&2; exit 1; }
demo="$(mktemp -d /tmp/agentgate-demo.XXXXXX)"
trap 'rm -rf "$demo"' EXIT
home="$demo/home/sam"
mkdir -p "$home/.local/bin"
go test -c -tags migrated_fynedo -o "$home/.local/bin/claude" ./ui
# A private display even when one is set, so every run looks the same.
cd ui
env -u DISPLAY AGENTGATE_SCREENSHOTS="$out" AGENTGATE_BIN="$PWD/../bin/agentgate" AGENTGATE_DEMO_HOME="$home" \
  ../scripts/with-xvfb.sh "$home/.local/bin/claude" -test.run '^TestScreenshots$' -test.v -test.timeout 15m
