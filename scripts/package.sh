#!/usr/bin/env bash
# package.sh builds the Linux archive with `fyne package` (fyne.io/tools v1.7.4):
#   dist/agentgate-<version>-linux-<goarch>.tar.xz
# holding the release binary, the .desktop file, the 512 px icon and a Makefile
# with install / uninstall / user-install / user-uninstall targets.
#
# The version comes from FyneApp.toml ([Details] Version); the commit from git
# (or "unknown" outside a git work tree). Both are linked into the binary as
# cli.version and cli.commit. VERSION and COMMIT in the environment (as the
# Makefile passes them) take precedence, so `make` and this script agree.
#
# `fyne` v1.7.4 is installed into $(go env GOPATH)/bin when no fyne of that
# version is there; a fyne of another version elsewhere on PATH is left alone.
# The first build compiles Fyne's cgo parts (about five minutes on two cores);
# the Go build cache keeps them, so never clean it.
set -euo pipefail
cd "$(dirname "$0")/.."
# The workspace with Fyne's patched event loop, as the Makefile uses it.
export GOWORK="${GOWORK-$(scripts/fyne-work.sh)}"
root=$(pwd)

fyne_tools_version=v1.7.4
module=github.com/agentgate/agentgate

version=${VERSION:-$(awk -F'"' '/^\[/{s=$0} s=="[Details]" && /^Version[ \t]*=/{print $2; exit}' FyneApp.toml)}
commit=${COMMIT:-$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)}
if [ -z "$version" ]; then
  echo "package: no [Details] Version in $root/FyneApp.toml; add one (e.g. Version = \"0.1.0\")." >&2
  exit 2
fi
case "$version$commit" in
  *[[:space:]\"\'\\]*)
    echo "package: version \"$version\" or commit \"$commit\" contains a space, quote or backslash;" \
         "fyne passes ldflags through GOFLAGS, which splits on spaces. Use a plain value." >&2
    exit 2 ;;
esac

fyne="$(go env GOPATH)/bin/fyne"
have=""
if [ -x "$fyne" ]; then
  have=$("$fyne" version 2>/dev/null | awk '/fyne cli version/{print $NF}')
fi
if [ "$have" != "$fyne_tools_version" ]; then
  echo "package: installing fyne.io/tools/cmd/fyne@$fyne_tools_version into $(dirname "$fyne") (found: ${have:-none})"
  GOBIN="$(dirname "$fyne")" go install "fyne.io/tools/cmd/fyne@$fyne_tools_version"
fi

# fyne package has no -ldflags option: it takes every -ldflags= word out of
# GOFLAGS and passes them to `go build -ldflags`, keeping the other GOFLAGS.
export GOFLAGS="${GOFLAGS:+$GOFLAGS }-ldflags=-X=$module/cli.version=$version -ldflags=-X=$module/cli.commit=$commit"

# fyne package writes <Name>.tar.xz into the current directory and stages its
# files in ./tmp-pkg, so run it from a clean dist/ work directory.
# fyne package also rewrites FyneApp.toml (Build + 1, comments dropped); the
# build number is not ours to change on every package, so put the file back.
mkdir -p dist
work=$(mktemp -d "$root/dist/.package.XXXXXX")
cp -p FyneApp.toml "$work/FyneApp.toml.orig"
trap 'cp -p "$work/FyneApp.toml.orig" "$root/FyneApp.toml"; rm -rf "$work"' EXIT
echo "package: fyne package -os linux -release (version $version, commit $commit)"
(cd "$work" && "$fyne" package -os linux -release --src "$root")

# The lean executables (ARCHITECTURE.md, "Four executables") go beside agentgate:
# agentgate-hook and agentgate-mcp. fyne packages one binary, so add them to
# the archive and to the archive's Makefile (install, uninstall,
# user-install, user-uninstall).
mkdir "$work/x"
tar -xJf "$work/agentgate.tar.xz" -C "$work/x"
for lean in agentgate-hook agentgate-mcp; do
  echo "package: adding $lean"
  CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X $module/cli.version=$version -X $module/cli.commit=$commit" \
    -o "$work/x/agentgate/usr/local/bin/$lean" "./cmd/$lean"
  sed -i \
    -e 's|^\(\t\)install -Dm00755 usr/local/bin/$(Exec) \(.*\)/bin/$(Exec)$|&\n\1install -Dm00755 usr/local/bin/'"$lean"' \2/bin/'"$lean"'|' \
    -e 's|^\(\t\)-rm \(.*\)/bin/$(Exec)$|&\n\1-rm \2/bin/'"$lean"'|' \
    "$work/x/agentgate/Makefile"
  grep -q "bin/$lean" "$work/x/agentgate/Makefile" || { echo "package: could not add $lean to the archive's Makefile" >&2; exit 1; }
done
# The confinement shim (docs/lifetime.md, "Write confinement") is a small
# static C program; it goes beside agentgate the same way.
echo "package: adding agentgate-shim"
"${CC:-cc}" -static -O2 -Wall -Wextra -s -o "$work/x/agentgate/usr/local/bin/agentgate-shim" cmd/agentgate-shim/shim.c
sed -i \
  -e 's|^\(\t\)install -Dm00755 usr/local/bin/$(Exec) \(.*\)/bin/$(Exec)$|&\n\1install -Dm00755 usr/local/bin/agentgate-shim \2/bin/agentgate-shim|' \
  -e 's|^\(\t\)-rm \(.*\)/bin/$(Exec)$|&\n\1-rm \2/bin/agentgate-shim|' \
  "$work/x/agentgate/Makefile"
grep -q "bin/agentgate-shim" "$work/x/agentgate/Makefile" || { echo "package: could not add agentgate-shim to the archive's Makefile" >&2; exit 1; }

out="dist/agentgate-$version-linux-$(go env GOARCH).tar.xz"
tar -cJf "$out" -C "$work/x" agentgate
echo "package: wrote $out"
