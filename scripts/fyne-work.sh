#!/usr/bin/env bash
# fyne-work.sh prepares the Go workspace every build and test of agentgate
# uses (the Makefile exports GOWORK with it; scripts/bench.sh, package.sh and
# screenshots.sh too when started by hand) and prints its path: bin/go.work,
# which uses this module and replaces two of its dependencies (the versions
# go.mod requires) with copies patched here:
#
#   - fyne.io/fyne/v2, by scripts/fyne-idle-loop.patch: Fyne's GLFW event
#     loop polls at 2 Hz instead of 60 Hz while no window is visible; work
#     queued for the main goroutine (fyne.Do, a tray menu click) still runs
#     at once and a window shown by it brings the 60 Hz tick back.
#     Unpatched, the app at rest spends 2 % of a core polling for events of
#     hidden windows (BENCHMARKS.md, "The app at rest").
#   - mvdan.cc/sh/v3, by scripts/sh-lazy-regexp.patch: package fileutil
#     compiles its two regular expressions on first use instead of at init.
#     The syntax package (the one shell-word reader, exec/shellword) imports
#     fileutil for its printer, which agentgate never calls, so every
#     process paid for compiling them at start — about 200,000 instructions,
#     a sixth of what the hook (agentgate-hook, run before every tool call)
#     executes in user space (BENCHMARKS.md, "The hook").
#
# Each copy is made once per module version and patch under
# ${XDG_CACHE_HOME:-~/.cache}/agentgate-build/. When a module cannot be had
# or its patch does not apply (another version), it says so on stderr and
# the workspace leaves that module as it is; when neither can be patched it
# prints nothing and the build uses no workspace.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD
cache=${XDG_CACHE_HOME:-$HOME/.cache}/agentgate-build

# patched MODULE FILE PATCH WHAT prints "VERSION COPY": the module's copy
# with PATCH applied (FILE, relative to the module, must exist and is hashed
# with the patch to name the copy), or nothing, saying why on stderr.
patched() {
  local module=$1 file=$2 patchfile=$root/scripts/$3 what=$4 info dir ver sum copy tmp
  say() { echo "fyne-work: $*; building with $module as it is ($what unpatched)" >&2; }
  info=$(GOWORK=off go mod download -json "$module" 2>/dev/null) || { say "$module cannot be downloaded"; return; }
  field() { printf '%s' "$info" | sed -n "s/^[[:space:]]*\"$1\": \"\(.*\)\",*\$/\1/p"; }
  dir=$(field Dir)
  ver=$(field Version)
  [ -f "$dir/$file" ] || { say "no $file in $dir"; return; }
  sum=$(cat "$dir/$file" "$patchfile" | sha256sum | cut -c1-16)
  copy=$cache/$(basename "${module%/v[0-9]*}")-$ver-$sum
  if [ ! -f "$copy/.patched" ]; then
    mkdir -p "$cache"
    tmp=$(mktemp -d "$cache/.copy-XXXXXX")
    cp -r "$dir/." "$tmp/" && chmod -R u+w "$tmp" || { rm -rf "$tmp"; say "copying $dir failed"; return; }
    # git apply, not patch(1): this runs when make reads the Makefile,
    # before scripts/deps.sh has installed anything.
    if ! (cd "$tmp" && git apply -p1 "$patchfile") >&2; then
      rm -rf "$tmp"
      say "scripts/$3 does not apply to $module $ver"
      return
    fi
    touch "$tmp/.patched"
    rm -rf "$copy"
    mv "$tmp" "$copy" || { rm -rf "$tmp"; say "installing the patched copy failed"; return; }
  fi
  echo "$ver $copy"
}

replaces=
for spec in "fyne.io/fyne/v2 internal/driver/glfw/loop.go fyne-idle-loop.patch Fyne's event loop" \
            "mvdan.cc/sh/v3 fileutil/file.go sh-lazy-regexp.patch the shell parser's start-up"; do
  read -r module file patchfile what <<<"$spec"
  got=$(patched "$module" "$file" "$patchfile" "$what")
  [ -n "$got" ] && replaces+=$(printf 'replace %s %s => %s\n' "$module" ${got% *} "${got#* }")$'\n'
done
[ -n "$replaces" ] || exit 0
gover=$(sed -n 's/^go \([0-9.]*\)$/\1/p' go.mod)
mkdir -p bin
work=$root/bin/go.work
want=$(printf 'go %s\n\nuse %s\n\n%s' "$gover" "$root" "$replaces")
if [ "$(cat "$work" 2>/dev/null)" != "$want" ]; then
  printf '%s\n' "$want" >"$work.tmp" && mv "$work.tmp" "$work"
fi
echo "$work"
