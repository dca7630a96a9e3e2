#!/usr/bin/env bash
# fyne-work.sh prepares the Go workspace every build and test of agentgate
# uses (the Makefile exports GOWORK with it; scripts/bench.sh, package.sh and
# screenshots.sh too when started by hand) and prints its path: bin/go.work, which
# uses this module and replaces fyne.io/fyne/v2 (the version go.mod requires)
# with a copy patched by scripts/fyne-idle-loop.patch. The patch makes Fyne's
# GLFW event loop poll at 2 Hz instead of 60 Hz while no window is visible;
# work queued for the main goroutine (fyne.Do, a tray menu click) still runs
# at once and a window shown by it brings the 60 Hz tick back. Unpatched, the
# app at rest spends 2 % of a core polling for events of hidden windows
# (BENCHMARKS.md, "The app at rest"). The copy is made once per Fyne version
# and patch under ${XDG_CACHE_HOME:-~/.cache}/agentgate-build/. When the
# module cannot be had or the patch does not apply (another Fyne version), it
# says so on stderr and prints nothing: the build then uses Fyne as it is.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD
patchfile=$root/scripts/fyne-idle-loop.patch
say() { echo "fyne-work: $*; building with Fyne's own event loop" >&2; }
info=$(GOWORK=off go mod download -json fyne.io/fyne/v2 2>/dev/null) || { say "fyne.io/fyne/v2 cannot be downloaded"; exit 0; }
field() { printf '%s' "$info" | sed -n "s/^[[:space:]]*\"$1\": \"\(.*\)\",*\$/\1/p"; }
dir=$(field Dir)
ver=$(field Version)
[ -f "$dir/internal/driver/glfw/loop.go" ] || { say "no event loop in $dir"; exit 0; }
sum=$(cat "$dir/internal/driver/glfw/loop.go" "$patchfile" | sha256sum | cut -c1-16)
cache=${XDG_CACHE_HOME:-$HOME/.cache}/agentgate-build
copy=$cache/fyne-$ver-$sum
if [ ! -f "$copy/.patched" ]; then
  mkdir -p "$cache"
  tmp=$(mktemp -d "$cache/.fyne-XXXXXX")
  cp -r "$dir/." "$tmp/" && chmod -R u+w "$tmp" || { rm -rf "$tmp"; say "copying $dir failed"; exit 0; }
  # git apply, not patch(1): this runs when make reads the Makefile, before
  # scripts/deps.sh has installed anything.
  if ! (cd "$tmp" && git apply -p1 "$patchfile") >&2; then
    rm -rf "$tmp"
    say "scripts/fyne-idle-loop.patch does not apply to Fyne $ver"
    exit 0
  fi
  touch "$tmp/.patched"
  rm -rf "$copy"
  mv "$tmp" "$copy" || { rm -rf "$tmp"; say "installing the patched copy failed"; exit 0; }
fi
gover=$(sed -n 's/^go \([0-9.]*\)$/\1/p' go.mod)
mkdir -p bin
work=$root/bin/go.work
want=$(printf 'go %s\n\nuse %s\n\nreplace fyne.io/fyne/v2 %s => %s\n' "$gover" "$root" "$ver" "$copy")
if [ "$(cat "$work" 2>/dev/null)" != "$want" ]; then
  printf '%s\n' "$want" >"$work.tmp" && mv "$work.tmp" "$work"
fi
echo "$work"
