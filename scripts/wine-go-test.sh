#!/bin/sh
# wine-go-test.sh - run this module's Windows tests on Debian 12 under Wine 8.
#
# Usage (from the module root; needs the module's Go on PATH):
#   scripts/wine-go-test.sh [go test flags] PACKAGES...
#   e.g. scripts/wine-go-test.sh -p 1 -v -timeout 300s ./winjob/ ./exec/
# Exits with go test's status. It installs Wine and MinGW with apt-get when
# they are missing (as root, or through sudo). Its state (Wine prefix, shim,
# overlay) lives in $WINE_GO_TEST_DIR, by default
# ${XDG_CACHE_HOME:-$HOME/.cache}/agentgate-test/wine, outside the clone, so
# that only the first run pays for creating the prefix; Go's build cache
# keeps the overlaid standard library (about 4-5 minutes to compile on two
# cores the first time). Delete the directory to start afresh.
#
# Two Wine 8 gaps are papered over:
#  1. Current Go will not start without bcryptprimitives.dll!ProcessPrng,
#     which Wine 8 lacks: a shim built from bcryptprimitives.c (beside this
#     script) goes into the prefix's system32.
#  2. Go 1.26's os.Remove/RemoveAll try FileDispositionInformationEx, which
#     Wine 8 answers with STATUS_NOT_IMPLEMENTED ("Invalid function", so every
#     t.TempDir cleanup fails): a -overlay copy of internal/syscall/windows
#     treats that status like "not supported" and uses Go's own fallback.
# Not papered over: AF_UNIX sockets (WSAEAFNOSUPPORT) and symbolic links
# (os.Symlink "succeeds" but creates nothing) do not work in Wine 8; the
# tests that need them skip under Wine (see docs/lifetime.md).
set -eu

here=$(cd "$(dirname "$0")" && pwd)
state=${WINE_GO_TEST_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/agentgate-test/wine}
export WINEPREFIX="$state/prefix" WINEDEBUG=-all
export GOOS=windows GOARCH=amd64 CGO_ENABLED=0
mkdir -p "$state"

# 1. Packages (Debian 12: wine 8.0, MinGW-w64 GCC 12).
if [ ! -x /usr/lib/wine/wine64 ] || ! command -v x86_64-w64-mingw32-gcc >/dev/null; then
	sudo=""
	if [ "$(id -u)" -ne 0 ]; then
		command -v sudo >/dev/null || {
			echo "wine-go-test: Wine and MinGW are missing; run as root or install: wine wine64 gcc-mingw-w64-x86-64" >&2
			exit 2
		}
		sudo=sudo
	fi
	echo "wine-go-test: installing wine wine64 gcc-mingw-w64-x86-64" >&2
	$sudo apt-get update -q >/dev/null
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends \
		wine wine64 gcc-mingw-w64-x86-64 >/dev/null
fi
command -v go >/dev/null || { echo "wine-go-test: go is not on PATH" >&2; exit 2; }

# 2. The ProcessPrng shim.
dll="$state/bcryptprimitives.dll"
if [ ! -f "$dll" ] || [ "$here/bcryptprimitives.c" -nt "$dll" ]; then
	x86_64-w64-mingw32-gcc -shared -O2 -s -nostdlib -e DllMain -o "$dll.tmp" \
		"$here/bcryptprimitives.c" -lkernel32 -ladvapi32
	mv "$dll.tmp" "$dll"
fi

# 3. The prefix (console only: no display, no Mono/Gecko prompts).
if [ ! -d "$WINEPREFIX/drive_c/windows/system32" ]; then
	echo "wine-go-test: creating the Wine prefix $WINEPREFIX" >&2
	WINEDLLOVERRIDES="mscoree,mshtml=" timeout 300 wineboot -i >/dev/null 2>&1
	timeout 60 wineserver -w || true
fi
cmp -s "$dll" "$WINEPREFIX/drive_c/windows/system32/bcryptprimitives.dll" ||
	cp "$dll" "$WINEPREFIX/drive_c/windows/system32/bcryptprimitives.dll"

# 4. The Deleteat overlay (skipped, with a warning, if this Go differs). The
#    overlaid file is rewritten only when it changes, so that Go's build
#    cache keeps the standard library compiled with it.
src="$(go env GOROOT)/src/internal/syscall/windows/at_windows.go"
overlay="$state/overlay.json"
if [ -f "$src" ] && grep -q '^		STATUS_NOT_SUPPORTED:' "$src"; then
	sed 's|^\(		STATUS_NOT_SUPPORTED\):|\1, NTStatus(0xC0000002): // + STATUS_NOT_IMPLEMENTED (Wine 8)|' \
		"$src" >"$state/at_windows.go.new"
	if cmp -s "$state/at_windows.go.new" "$state/at_windows.go"; then
		rm -f "$state/at_windows.go.new"
	else
		mv "$state/at_windows.go.new" "$state/at_windows.go"
	fi
	printf '{"Replace":{"%s":"%s"}}\n' "$src" "$state/at_windows.go" >"$overlay"
else
	rm -f "$overlay"
	echo "wine-go-test: $src not as expected; os.RemoveAll may fail under Wine" >&2
fi

# 5. The Wine server and the prefix's service processes (services.exe,
#    winedevice.exe, ...), started now with their output going nowhere and
#    kept for a minute after the last Windows program ends. Started by the
#    first test binary instead, they would inherit its stdout, and go test
#    would wait for that to close ("Test I/O incomplete ... WaitDelay
#    expired") while other packages keep the server busy.
wineserver -p60 </dev/null >/dev/null 2>&1 || true
wine cmd /c exit </dev/null >/dev/null 2>&1 || true

# 6. The -exec wrapper and the run.
cat >"$state/wine-exec" <<'WRAPPER'
#!/bin/sh
exec wine "$@"
WRAPPER
chmod +x "$state/wine-exec"
set -- -exec "$state/wine-exec" "$@"
[ -f "$overlay" ] && set -- -overlay "$overlay" "$@"
exec go test "$@"
