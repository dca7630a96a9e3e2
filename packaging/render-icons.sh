#!/usr/bin/env bash
# render-icons.sh renders the PNG icons from their SVG sources with rsvg-convert
# (Debian package librsvg2-bin). The PNGs are checked in, so building and
# packaging never need it; run this after editing an SVG, then look at the PNGs.
#
#   icon.svg               -> icons/hicolor/<N>x<N>/apps/dev.agentgate.agentgate.png
#                             for N in 16 32 48 64 128 256 512 (the 512 one is
#                             FyneApp.toml's Icon)
#   tray/tray-<state>.svg  -> tray/tray-<state>-<N>.png for N in 32 64
set -euo pipefail
cd "$(dirname "$0")"

if ! command -v rsvg-convert >/dev/null 2>&1; then
  echo "render-icons: rsvg-convert is missing; install the Debian package librsvg2-bin and run again." >&2
  exit 1
fi

app_id=dev.agentgate.agentgate
for n in 16 32 48 64 128 256 512; do
  dir="icons/hicolor/${n}x${n}/apps"
  mkdir -p "$dir"
  rsvg-convert --width "$n" --height "$n" --output "$dir/$app_id.png" icon.svg
done
for state in idle pending; do
  for n in 32 64; do
    rsvg-convert --width "$n" --height "$n" --output "tray/tray-$state-$n.png" "tray/tray-$state.svg"
  done
done
echo "render-icons: PNGs written under $(pwd)/icons and $(pwd)/tray"
