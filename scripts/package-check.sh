#!/usr/bin/env bash
# package-check.sh checks a Linux archive made by scripts/package.sh: it
# extracts it into a temporary directory and, with the archive's own Makefile,
#   1. `make install` into a temporary DESTDIR (PREFIX=/usr/local): the binary,
#      the .desktop file and the icon are installed; the binary is executable;
#      the .desktop file passes desktop-file-validate; the icon is a 512 px PNG;
#      `agentgate --version` prints "agentgate <FyneApp.toml Version> (<commit>)";
#      agentgate-hook answers; agentgate-shim is static and runs a program;
#   2. `make uninstall`: all three files are gone;
#   3. `make user-install` / `make user-uninstall` with HOME in the temporary
#      directory: the same files under ~/.local, Exec rewritten to the full path.
# Usage: scripts/package-check.sh [ARCHIVE]   (default: the archive for
# FyneApp.toml's Version and this machine's architecture in dist/).
# Nothing outside the temporary directory is touched; it is removed on exit.
set -euo pipefail
cd "$(dirname "$0")/.."

app_id=dev.agentgate.agentgate
version=$(awk -F'"' '/^\[/{s=$0} s=="[Details]" && /^Version[ \t]*=/{print $2; exit}' FyneApp.toml)
archive=${1:-dist/agentgate-$version-linux-$(go env GOARCH).tar.xz}
if [ ! -f "$archive" ]; then
  echo "package-check: no archive at $archive; build it with 'make package' (scripts/package.sh)." >&2
  exit 2
fi
archive=$(cd "$(dirname "$archive")" && pwd)/$(basename "$archive")

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failed=0
fail() { echo "package-check: FAIL: $*" >&2; failed=1; }
pass() { echo "package-check: ok: $*"; }

mkdir "$tmp/src"
tar -xJf "$archive" -C "$tmp/src"
pkg="$tmp/src/agentgate"
[ -f "$pkg/Makefile" ] || { echo "package-check: $archive holds no agentgate/Makefile; was it made by fyne package?" >&2; exit 1; }

# check_installed ROOT BINDIR SHAREDIR ICONDIR checks one installation.
check_installed() {
  local bin=$1/$2/agentgate desktop=$1/$3/applications/$app_id.desktop icon=$1/$4/$app_id.png
  if [ -x "$bin" ] && [ -f "$bin" ]; then pass "binary installed and executable: ${bin#"$tmp"/}"; else fail "no executable at $bin"; fi
  if [ -f "$desktop" ]; then
    pass "desktop file installed: ${desktop#"$tmp"/}"
    desktop-file-validate "$desktop" || fail "the installed $desktop does not validate (above)"
  else
    fail "no desktop file at $desktop"
  fi
  if [ -f "$icon" ]; then
    local format
    format=$(identify -format '%m %wx%h' "$icon")
    if [ "$format" = "PNG 512x512" ]; then pass "icon installed: ${icon#"$tmp"/}"; else fail "$icon is \"$format\", not a 512x512 PNG"; fi
  else
    fail "no icon at $icon"
  fi
  check_version "$bin"
  check_hook "$1/$2/agentgate-hook"
  check_mcp "$1/$2/agentgate-mcp"
  check_shim "$1/$2/agentgate-shim"
}

# check_shim BIN checks the confinement shim: installed, static, and able to
# execute a program and to set up the namespaces it is asked for (as a
# non-root user through a user namespace).
check_shim() {
  local status=0 ns=(-m -n)
  if [ ! -x "$1" ]; then fail "no executable agentgate-shim at $1"; return; fi
  if file "$1" 2>/dev/null | grep -q 'dynamically linked'; then fail "agentgate-shim is dynamically linked; it must be static"; fi
  [ "$(id -u)" -eq 0 ] || ns+=(-u)
  timeout 20 "$1" 2 -- /bin/sh sh -c 'exit 7' </dev/null || status=$?
  if [ "$status" -eq 7 ]; then pass "agentgate-shim executes a program"; else fail "agentgate-shim ran 'exit 7' with status $status"; fi
  status=0
  timeout 20 "$1" 2 "${ns[@]}" -P </dev/null || status=$?
  if [ "$status" -eq 0 ]; then pass "agentgate-shim sets up mount and network namespaces"
  else echo "package-check: SKIPPED: agentgate-shim could not make namespaces here (status $status); runs fall back to checking protected files"; fi
}

# check_hook BIN checks the lean hook executable: installed, and answering an
# unreadable payload with a PreToolUse deny, exit 0 (with no agent version
# recorded by setup, Claude Code gets deny, not "ask": docs/integrations.md).
check_hook() {
  local out status=0
  if [ ! -x "$1" ]; then fail "no executable agentgate-hook at $1"; return; fi
  out=$(echo 'not json' | timeout 20 "$1" claude-code 2>/dev/null) || status=$?
  if [ "$status" -eq 0 ] && [[ $out == *'"permissionDecision":"deny"'* ]]; then pass "agentgate-hook answers: deny"
  else fail "agentgate-hook exited $status and printed \"$out\"; expected a PreToolUse deny"; fi
}

# check_mcp BIN checks the lean MCP executable: installed, and answering an
# MCP initialize request with its server name. Standard input stays open until
# the answer's line arrives (at most 20 s): a server may drop a request whose
# client has already hung up.
check_mcp() {
  local out="" status=0
  if [ ! -x "$1" ]; then fail "no executable agentgate-mcp at $1"; return; fi
  coproc MCP { exec "$1" 2>/dev/null; }
  printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"package-check","version":"1"}}}' >&"${MCP[1]}"
  IFS= read -r -t 20 out <&"${MCP[0]}" || status=$?
  exec {MCP[1]}>&-
  wait "$MCP_PID" 2>/dev/null || true
  if [[ $out == *'"name":"agentgate"'* ]]; then pass "agentgate-mcp answers initialize"
  else fail "agentgate-mcp (read status $status) printed \"$out\"; expected an initialize result"; fi
}

# check_version BIN checks that BIN answers --version with FyneApp.toml's
# Version. Until cli/ implements --version (no "--version" in cli/*.go) the
# check is reported as SKIPPED instead of failing; once cli/ mentions it, the
# check is enforced.
check_version() {
  [ -x "$1" ] || return 0
  local out status=0
  out=$(timeout 20 "$1" --version </dev/null 2>&1) || status=$?
  if [ "$status" -eq 0 ] && [[ $out =~ ^agentgate\ $version\ \([^\ \)]+\)$ ]]; then
    pass "--version: $out"
  elif ! grep -qs -e '"--version"' $(ls cli/*.go 2>/dev/null | grep -v '_test\.go$'); then
    echo "package-check: SKIPPED: --version check (cli/ does not implement --version yet; the binary said: $(head -n 1 <<<"$out" | cut -c1-120))"
  else
    fail "'agentgate --version' exited $status and printed \"$out\"; expected \"agentgate $version (<commit>)\""
  fi
}

# check_removed ROOT PATH… checks that every PATH under ROOT is gone.
check_removed() {
  local root=$1 p gone=1
  shift
  for p in "$@"; do
    if [ -e "$root/$p" ]; then fail "$root/$p is still there after uninstall"; gone=0; fi
  done
  [ "$gone" -eq 1 ] && pass "uninstall removed: $*"
}

echo "package-check: system install (DESTDIR=<tmp>/root PREFIX=/usr/local)"
make -s -C "$pkg" install DESTDIR="$tmp/root" PREFIX=/usr/local
check_installed "$tmp/root" usr/local/bin usr/local/share usr/local/share/pixmaps
make -s -C "$pkg" uninstall DESTDIR="$tmp/root" PREFIX=/usr/local
check_removed "$tmp/root" usr/local/bin/agentgate usr/local/bin/agentgate-hook usr/local/bin/agentgate-mcp usr/local/bin/agentgate-shim "usr/local/share/applications/$app_id.desktop" \
  "usr/local/share/pixmaps/$app_id.png"

echo "package-check: user install (HOME=<tmp>/home)"
mkdir -p "$tmp/home"
HOME="$tmp/home" make -s -C "$pkg" user-install
check_installed "$tmp/home" .local/bin .local/share .local/share/icons
exec_line=$(grep '^Exec=' "$tmp/home/.local/share/applications/$app_id.desktop" || true)
if [ "$exec_line" = "Exec=$tmp/home/.local/bin/agentgate" ]; then pass "user desktop file starts the installed binary: $exec_line"
else fail "user desktop file has \"$exec_line\", expected Exec=$tmp/home/.local/bin/agentgate"; fi
HOME="$tmp/home" make -s -C "$pkg" user-uninstall
check_removed "$tmp/home" .local/bin/agentgate .local/bin/agentgate-hook .local/bin/agentgate-mcp .local/bin/agentgate-shim ".local/share/applications/$app_id.desktop" \
  ".local/share/icons/$app_id.png"

if [ "$failed" -ne 0 ]; then
  echo "package-check: FAILED for $archive" >&2
  exit 1
fi
echo "package-check: $archive installs, answers, and uninstalls cleanly"
