#!/usr/bin/env bash
# bench-against.sh REV [ROUNDS] answers "did this benchmark regress since
# REV?" on this machine, now: it checks REV out into a temporary worktree and
# runs the benchmarks that REV and this checkout measure the same way, the
# build of REV and this one alternated ROUNDS times (default 3), each run
# after the machine settled (scripts/settle.sh). Figures from another day or
# machine cannot answer it: on the project's VMs a single figure moves by a
# factor of two from hour to hour, and the host's CPU model changed under
# it (BENCHMARKS.md).
#
# Each figure is a ratio its own build measured against a baseline in the
# same go test run (the executor against raw os/exec, the hook against a
# hello-world program…), so REV and this checkout each bring their own
# baseline. Printed per figure: REV's and this checkout's values per round,
# their medians and this ÷ REV (for a throughput, higher is better; for a
# time or a cost ratio, lower is). Only benchmarks whose code and method are
# the same in both are listed; the interleaved ones (ExecutorVsRaw) are the
# only executor figure the 2026-11-30 build measured that way.
#
# The raw go test output goes to ${BENCH_OUT:-bench-against.out}.
set -euo pipefail
cd "$(dirname "$0")/.."
rev=${1:?usage: scripts/bench-against.sh REV [ROUNDS]}
rounds=${2:-3}
out=${BENCH_OUT:-bench-against.out}
: >"$out"
# shellcheck source=scripts/settle.sh
source scripts/settle.sh

old=$(mktemp -d /tmp/agentgate-against.XXXXXX)
trap 'git worktree remove --force "$old" >/dev/null 2>&1 || rm -rf "$old"' EXIT
git worktree add --detach "$old" "$rev" >/dev/null

# figure|package|-bench regexp|benchtime|benchmark line (regexp)|metric|better
figures=(
  "executor true vs raw os/exec, interleaved (x-raw)|./exec|ExecutorVsRaw|300x|^BenchmarkExecutorVsRaw-|x-raw|lower"
  "stdout 1 GiB through the executor, MB/s|./exec|Stdout1GiB|3x|^BenchmarkStdout1GiB-|MB/s|higher"
  "stdout 1 GiB through a raw pipe, MB/s (the baseline)|./exec|RawPipe1GiB|3x|^BenchmarkRawPipe1GiB-|MB/s|higher"
  "unixpg start+wait true vs raw, interleaved (x-raw)|./unixpg|StartWaitVsRaw|300x|^BenchmarkStartWaitVsRaw-|x-raw|lower"
)

# The hook is an executable: both builds' agentgate-hook run under this
# checkout's harness and sandbox, in one loop with the same hello-world
# program (cli/hook BenchmarkHookAgainst).
# The 2026-11-30 harness ran executables as the linker wrote them, which
# costs page faults the installed ones do not have.
hook_name="hook CPU vs hello-world (cpu-ratio), one harness"
# Each side builds as its own `make` does: this checkout in its workspace
# (scripts/fyne-work.sh: the patched Fyne event loop and shell parser's
# start-up), REV as it is unless it has that script too.
work_new=$(scripts/fyne-work.sh)
work_old=
[[ -x $old/scripts/fyne-work.sh ]] && work_old=$(cd "$old" && scripts/fyne-work.sh)
(cd "$old" && CGO_ENABLED=0 GOWORK=${work_old:-off} go build -o "$old/agentgate-hook.against" ./cmd/agentgate-hook)

# metric LINE_RE METRIC FILE prints the value before METRIC on the last
# benchmark line matching LINE_RE.
metric() {
  awk -v re="$1" -v m="$2" '$0 ~ re { for (i = 2; i <= NF; i++) if ($i == m) v = $(i - 1) } END { print (v == "" ? "-" : v) }' "$3"
}

declare -A vals
for ((r = 1; r <= rounds; r++)); do
  for side in old new; do
    dir=$PWD work=${work_new:-off}
    [[ $side == old ]] && dir=$old work=${work_old:-off}
    for f in "${figures[@]}"; do
      IFS='|' read -r name pkg re bt line m _ <<<"$f"
      settle
      tmp=$(mktemp)
      echo "== round $r $side ($([[ $side == old ]] && echo "$rev" || git rev-parse --short HEAD)): go test -bench '$re' -benchtime $bt $pkg" | tee -a "$out"
      (cd "$dir" && GOWORK=$work go test -run '^$' -bench "$re" -benchtime "$bt" -count 1 "$pkg" 2>&1) | tee -a "$out" >"$tmp" || true
      vals["$name|$side"]+="$(metric "$line" "$m" "$tmp") "
      rm -f "$tmp"
    done
  done
  settle
  tmp=$(mktemp)
  echo "== round $r, both hooks: go test -bench HookAgainst -benchtime 100x ./cli/hook" | tee -a "$out"
  AGENTGATE_HOOK_AGAINST="$old/agentgate-hook.against" GOWORK=${work_new:-off} go test -run '^$' -bench HookAgainst -benchtime 100x -count 1 ./cli/hook 2>&1 | tee -a "$out" >"$tmp" || true
  vals["$hook_name|old"]+="$(metric '^BenchmarkHookAgainst-' against-cpu-ratio "$tmp") "
  vals["$hook_name|new"]+="$(metric '^BenchmarkHookAgainst-' this-cpu-ratio "$tmp") "
  rm -f "$tmp"
done
# The hook, measured apart above, is printed with the others.
figures+=("$hook_name||||||lower")

median() { tr ' ' '\n' | grep -v -e '^$' -e '^-$' | sort -g | awk '{ a[NR] = $1 } END { if (NR) print (NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2); else print "-" }'; }
{
  printf '%s\n' "against $rev ($(git rev-parse --short "$rev")), this checkout $(git rev-parse --short HEAD), $rounds rounds alternated, $(date -u +%Y-%m-%dT%H:%MZ)"
  printf '%-58s | %-24s | %-24s | %s\n' figure "$rev (rounds)" "this (rounds)" "this ÷ $rev (median)"
  for f in "${figures[@]}"; do
    IFS='|' read -r name _ _ _ _ _ better <<<"$f"
    o=$(echo "${vals["$name|old"]}" | median)
    n=$(echo "${vals["$name|new"]}" | median)
    q=$(awk -v o="$o" -v n="$n" 'BEGIN { if (o + 0 > 0 && n != "-") printf "%.2f", n / o; else print "-" }')
    printf '%-58s | %-24s | %-24s | %s (%s is better)\n' "$name" "${vals["$name|old"]}" "${vals["$name|new"]}" "$q" "$better"
  done
} | tee "$out.summary"
