#!/usr/bin/env bash
# validate-packaging.sh checks the packaging files offline and exits non-zero on
# the first kind of failure it finds (after reporting every problem of that run):
#   - desktop-file-validate on packaging/dev.agentgate.agentgate.desktop and
#     packaging/agentgate-autostart.desktop (hints are allowed, errors are not);
#   - appstreamcli validate --no-net on the AppStream metainfo (infos and
#     pedantic hints are allowed, warnings and errors are not);
#   - that FyneApp.toml, the .desktop file and the metainfo agree: the newest
#     <release> is FyneApp.toml's Version; Name, GenericName, Comment,
#     Categories and Keywords equal FyneApp.toml's; the metainfo launches the
#     .desktop file by its name; the autostart entry is enabled and starts
#     `agentgate` with no arguments;
#   - that every icon exists with its nominal size.
# Needs the Debian packages desktop-file-utils, appstream and imagemagick.
set -euo pipefail
cd "$(dirname "$0")/.."

app_id=dev.agentgate.agentgate
desktop=packaging/$app_id.desktop
autostart=packaging/agentgate-autostart.desktop
metainfo=packaging/$app_id.metainfo.xml
failed=0
fail() { echo "validate-packaging: $*" >&2; failed=1; }

for tool in desktop-file-validate:desktop-file-utils appstreamcli:appstream identify:imagemagick; do
  if ! command -v "${tool%%:*}" >/dev/null 2>&1; then
    echo "validate-packaging: ${tool%%:*} is missing; install the Debian package ${tool#*:} (make deps does)." >&2
    exit 2
  fi
done

# desktop-file-validate prints hints too but exits non-zero only on errors.
desktop-file-validate "$desktop" "$autostart" || fail "desktop-file-validate reported errors (above)"
appstreamcli validate --no-net --pedantic "$metainfo" || fail "appstreamcli reported problems in $metainfo (above)"

# toml_value SECTION KEY prints the raw value of KEY in [SECTION] of FyneApp.toml.
toml_value() {
  awk -v want="[$1]" -v key="$2" '
    /^[ \t]*\[/ { section = $0; gsub(/[ \t]/, "", section); next }
    section == want && $0 ~ "^[ \t]*" key "[ \t]*=" { sub(/^[^=]*=[ \t]*/, ""); print; exit }
  ' FyneApp.toml
}
# toml_string SECTION KEY prints a string value without its quotes.
toml_string() { toml_value "$1" "$2" | sed -e 's/^"//' -e 's/"[ \t]*$//'; }
# toml_list SECTION KEY prints a string array as a desktop-entry list: a;b;c;
toml_list() { toml_value "$1" "$2" | tr -d '[]"' | tr ',' '\n' | sed -e 's/^[ \t]*//' -e 's/[ \t]*$//' | awk 'NF { printf "%s;", $0 }'; }
# desktop_value FILE KEY prints KEY's value in FILE's [Desktop Entry] group.
desktop_value() {
  awk -v key="$2" '
    /^\[/ { group = $0; next }
    group == "[Desktop Entry]" && index($0, key "=") == 1 { print substr($0, length(key) + 2); exit }
  ' "$1"
}
# expect WHAT GOT WANT reports a mismatch.
expect() { [ "$2" = "$3" ] || fail "$1 is \"$2\" but should be \"$3\""; }

version=$(toml_string Details Version)
[ -n "$version" ] || fail "FyneApp.toml has no [Details] Version"
expect "FyneApp.toml [Details] ID" "$(toml_string Details ID)" "$app_id"
newest_release=$(grep -o '<release [^>]*version="[^"]*"' "$metainfo" | head -n 1 | sed 's/.*version="\([^"]*\)"/\1/')
expect "the newest <release> in $metainfo" "$newest_release" "$version"
expect "<id> in $metainfo" "$(sed -n 's:.*<id>\(.*\)</id>.*:\1:p' "$metainfo" | head -n 1)" "$app_id"
expect "<launchable> in $metainfo" \
  "$(sed -n 's:.*<launchable type="desktop-id">\(.*\)</launchable>.*:\1:p' "$metainfo")" "$(basename "$desktop")"

expect "Name in $desktop" "$(desktop_value "$desktop" Name)" "$(toml_string Details Name)"
for key in GenericName Comment; do
  expect "$key in $desktop" "$(desktop_value "$desktop" "$key")" "$(toml_string LinuxAndBSD "$key")"
done
for key in Categories Keywords; do
  expect "$key in $desktop" "$(desktop_value "$desktop" "$key")" "$(toml_list LinuxAndBSD "$key")"
done
expect "Icon in $desktop" "$(desktop_value "$desktop" Icon)" "$app_id"
expect "Exec in $desktop" "$(desktop_value "$desktop" Exec)" "agentgate"

# The autostart entry starts the app without its window (ui.BackgroundFlag).
expect "Exec in $autostart" "$(desktop_value "$autostart" Exec)" "agentgate --background"
expect "X-GNOME-Autostart-enabled in $autostart" "$(desktop_value "$autostart" X-GNOME-Autostart-enabled)" "true"
expect "Icon in $autostart" "$(desktop_value "$autostart" Icon)" "$app_id"

# check_png FILE SIZE reports a missing icon or one of the wrong size.
check_png() {
  if [ ! -f "$1" ]; then fail "icon $1 is missing; run packaging/render-icons.sh"; return; fi
  expect "the size of $1" "$(identify -format '%m %wx%h' "$1")" "PNG $2x$2"
}
fyne_icon=$(toml_string Details Icon)
check_png "$fyne_icon" 512
for n in 16 32 48 64 128 256 512; do
  check_png "packaging/icons/hicolor/${n}x${n}/apps/$app_id.png" "$n"
done
for state in idle pending; do
  [ -f "packaging/tray/tray-$state.svg" ] || fail "packaging/tray/tray-$state.svg is missing"
  for n in 32 64; do check_png "packaging/tray/tray-$state-$n.png" "$n"; done
done
[ -f packaging/icon.svg ] || fail "packaging/icon.svg is missing"

if [ "$failed" -ne 0 ]; then
  echo "validate-packaging: FAILED" >&2
  exit 1
fi
echo "validate-packaging: desktop entries, AppStream metainfo, FyneApp.toml and icons are valid and agree (version $version)"
