#!/usr/bin/env bash
# test-windows.sh - `make test`'s Windows step: every given package's tests,
# compiled for Windows, run under Wine 8 (scripts/wine-go-test.sh), then a
# table per package of how many tests ran, passed, failed and were skipped,
# so that a package whose tests only skip under Wine shows as such.
#
# Usage: scripts/test-windows.sh PACKAGES...
# Writes the go test output to bin/test-windows.log and the table to
# bin/test-windows-summary.txt; exits non-zero when a test or build failed.
set -uo pipefail
cd "$(dirname "$0")/.."
mkdir -p bin
log=bin/test-windows.log
summary=bin/test-windows-summary.txt

start=$(date +%s)
# -p 2: one package's test binary runs under Wine while the next compiles.
scripts/wine-go-test.sh -p 2 -v -count=1 -timeout 20m "$@" >"$log" 2>&1
status=$?
elapsed=$(($(date +%s) - start))

# Counts top-level tests (--- PASS/FAIL/SKIP at column 0) per package; the
# package's result line (ok / FAIL / ?) closes its block.
awk -v elapsed="$elapsed" '
function reset() { pass = 0; fail = 0; skip = 0 }
function row(result, pkg, note) {
	printf "%-52s %-4s ran %3d  passed %3d  failed %2d  skipped %3d%s\n", pkg, result, pass + fail, pass, fail, skip, note
	tp += pass; tf += fail; ts += skip; reset()
}
BEGIN { reset(); print "Windows tests under Wine (scripts/test-windows.sh; top-level tests per package):" }
/^--- PASS: / { pass++ }
/^--- FAIL: / { fail++ }
/^--- SKIP: / { skip++ }
/^ok  \t/ {
	note = ""
	if (pass + fail == 0 && skip > 0) note = "  (only skips: nothing ran under Wine)"
	row("ok", $2, note); next
}
/^FAIL\t/ { row("FAIL", $2, ($3 == "[build" ? "  (build failed)" : "")); next }
/^\?   \t/ { printf "%-52s %-4s no test files\n", $2, "-"; next }
END {
	printf "Windows total: ran %d, passed %d, failed %d, skipped %d (%ds under Wine)\n", tp + tf, tp, tf, ts, elapsed
}' "$log" | tee "$summary"

# The tests that exist only for Windows (in *_windows_test.go files), each
# with its result: the executor's Windows tests, the planted batch file, ...
module=$(go list -m)
awk '
/^--- (PASS|FAIL|SKIP): / { n++; name[n] = $3; res[n] = substr($2, 1, 4) }
/^(ok  |FAIL)\t/ { for (i = 1; i <= n; i++) print $2, name[i], res[i]; n = 0 }
' "$log" >bin/test-windows-results.txt
echo "Windows-only tests (*_windows_test.go) under Wine:" | tee -a "$summary"
{ git ls-files '*_windows_test.go' 2>/dev/null || find . -name '*_windows_test.go' | sed 's|^\./||'; } | sort | while read -r file; do
	pkg="$module/$(dirname "$file")"
	for test in $(sed -n 's/^func \(Test[A-Za-z0-9_]*\)(t \*testing\.T).*/\1/p' "$file"); do
		result=$(awk -v p="$pkg" -v t="$test" '$1 == p && $2 == t { print $3 }' bin/test-windows-results.txt)
		printf '  %-8s %s (%s)\n' "${result:-NOT RUN}" "$test" "$file"
	done
done | tee -a "$summary"

if [ "$status" -ne 0 ]; then
	echo "test-windows: go test under Wine failed (exit $status); what failed, from $log:" >&2
	# Each failed top-level test's output (from its === RUN line), panics
	# and build errors.
	awk '/^=== RUN   [^\/]*$/ { buf = "" } { buf = buf $0 "\n" }
		/^--- FAIL: / { printf "%s", buf; buf = "" }
		/^panic: |\[build failed\]|^# / { print }' "$log" | head -300 >&2
fi
exit "$status"
