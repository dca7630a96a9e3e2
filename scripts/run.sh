#!/usr/bin/env bash
# run.sh starts the desktop app built at bin/agentgate. On a machine with no
# display it starts a virtual one (Xvfb) first, says so, and stops it when the
# app quits.
set -euo pipefail
bin="${1:-bin/agentgate}"
export LANG="${LANG:-C.UTF-8}"
[ "$LANG" = C ] && export LANG=C.UTF-8

xvfb_pid=""
cleanup() { [ -n "$xvfb_pid" ] && kill "$xvfb_pid" 2>/dev/null || true; }
trap cleanup EXIT

if [ -z "${DISPLAY:-}" ] && [ -z "${WAYLAND_DISPLAY:-}" ]; then
  for n in $(seq 99 120); do
    [ -e "/tmp/.X11-unix/X$n" ] || [ -e "/tmp/.X$n-lock" ] && continue
    Xvfb ":$n" -screen 0 1280x800x24 -nolisten tcp >/tmp/agentgate-xvfb-$n.log 2>&1 &
    xvfb_pid=$!
    export DISPLAY=":$n"
    for _ in $(seq 50); do [ -e "/tmp/.X11-unix/X$n" ] && break; sleep 0.1; done
    break
  done
  echo "make run: no display found, so agentgate runs on a virtual display (Xvfb $DISPLAY)."
  echo "          Screenshot it with: DISPLAY=$DISPLAY import -window root shot.png"
fi

sock="$("$bin" socket-path 2>/dev/null || true)"
echo "agentgate: the bridge listens on ${sock:-its default socket}"
echo "agentgate: try, from another terminal:  $bin run -- echo hello     (asks you there: once / deny / always)"
echo "agentgate: then connect an agent:        $bin setup claude-code     (or gemini, codex, mcp-json)"
"$bin"
