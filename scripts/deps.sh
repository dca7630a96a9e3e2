#!/usr/bin/env bash
# deps.sh installs what building, running and testing agentgate needs — only
# what is missing. On Debian/Ubuntu it uses apt-get (as root, or with sudo);
# elsewhere it says what to install and stops.
set -euo pipefail

need_go="1.26"
if ! command -v go >/dev/null 2>&1; then
  echo "deps: Go $need_go or newer is required and 'go' is not on PATH." >&2
  echo "deps: install it from https://go.dev/dl/ (or /usr/local/go/bin to PATH) and run make again." >&2
  exit 1
fi

# Debian packages: cgo + Fyne's GL/X11/Wayland headers, and the tools the tests
# drive the app with (Xvfb, xdotool, ImageMagick's import, tclsh, tmux) and
# validate packaging with (desktop-file-validate, appstreamcli).
pkgs=(gcc musl-tools pkg-config libgl1-mesa-dev xorg-dev libwayland-dev libxkbcommon-dev
      xvfb xdotool imagemagick tcl tmux desktop-file-utils appstream xauth dbus-x11 patch
      nodejs npm)

if ! command -v dpkg-query >/dev/null 2>&1; then
  case "$(uname -s)" in
    Darwin) echo "deps: on macOS install the Xcode command line tools (xcode-select --install) and Tcl (brew install tcl-tk) for the tests." >&2 ;;
    *) echo "deps: not a Debian system; install the equivalents of: ${pkgs[*]}" >&2 ;;
  esac
  exit 0
fi

missing=()
for p in "${pkgs[@]}"; do
  # npm ships with NodeSource's nodejs; accept a working npm from anywhere.
  if [ "$p" = npm ] || [ "$p" = nodejs ]; then
    command -v npm >/dev/null 2>&1 && command -v node >/dev/null 2>&1 && continue
  fi
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null 2>&1 || { echo "deps: missing packages (${missing[*]}); run as root or install sudo." >&2; exit 1; }
  sudo=sudo
fi
echo "deps: installing ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
