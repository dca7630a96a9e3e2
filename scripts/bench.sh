#!/usr/bin/env bash
# bench.sh runs agentgate's benchmarks and prints every figure of SPEC §9 as
# a ratio against a baseline measured in the same run, beside its target.
# The raw `go test -bench` output is kept in bench.out (BENCHMARKS.md quotes it).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${BENCH_OUT:-bench.out}
tags=migrated_fynedo
: >"$out"

bench() { # package regexp benchtime
  echo "== go test -bench '$2' -benchtime $3 $1" | tee -a "$out"
  go test -tags "$tags" -run '^$' -bench "$2" -benchtime "$3" -count 1 "$1" 2>&1 | tee -a "$out"
}

bench ./exec       'ExecutorTrue|RawExecTrue|ExecutorVsRaw' 300x
bench ./exec       'Stdout1GiB|RawPipe1GiB'          3x
bench ./unixpg     'StartWaitVsRaw|TerminateToGone'  20x
bench ./prefs      'Decide'                          1s
bench ./agentbridge 'BridgeTrue|BridgeConcurrent50'  200x
bench ./cli/hook   'HookExecutable'                  100x
bench ./cli        'MCPRunCommand'                   1x
bench ./ui         'Processes10k|ListRecords10k'     3x
bench ./agentbridge/rulestats 'StatsUpdate100k|StatsFirstRead100k' 5x

# Each figure: label | how | first | second | target
#   ns    first/second by ns/op           (target: "<= x")
#   mbs   first/second by MB/s            (target: ">= x")
#   m     metric `second` of benchmark `first` (target: "<= x")
#   abs   ns/op of `first`                (target: "<= x" ns)
figures='
executor start+wait of true vs raw os/exec (interleaved)|m|ExecutorVsRaw|x-raw|<= 1.5
executor start+wait of true vs raw os/exec (separate runs, informational)|ns|ExecutorTrue|RawExecTrue|<= 1.5
stdout 1 GiB through the executor vs raw pipe|mbs|Stdout1GiB|RawPipe1GiB|>= 0.7
stdout 1 GiB: RSS growth, MiB|m|Stdout1GiB|MiB-RSS-growth|<= 32
unixpg supervisor start+wait vs raw (interleaved)|m|StartWaitVsRaw|x-raw|<= 1.5
timeout -> last descendant gone, ms over grace (SIGTERM ignored)|m|TerminateToGone/ignore|ms-over-grace|<= 200
rule decision, 100k rules vs 10 rules|ns|Decide/rules=100000|Decide/rules=10|<= 2
rule decision with 100k rules, ns|abs|Decide/rules=100000||<= 5000
bridge propose->exit of allow-listed true vs raw os/exec|m|BridgeTrue|x-raw|<= 2.5
500 proposals/50 clients: p99 / p50|m|BridgeConcurrent50|p99/p50|<= 5
hook claude-code (agentgate-hook) CPU vs hello-world Go binary|m|HookExecutable/static|cpu-ratio|<= 2
hook claude-code (agentgate hook, Fyne binary) CPU vs hello-world, informational|m|HookExecutable/fyne|cpu-ratio|<= 2
mcp run_command p50 vs mcp-server-commands 0.5.0|m|MCPRunCommand|p50-ratio|<= 1.0
mcp server start-up, ms|m|MCPRunCommand|agentgate-startup-ms|<= 50
Processes window with 10,000 runs: peak RSS, MiB|m|Processes10k|peak-RSS-MiB|<= 250
rule statistics, 100k-entry audit log: update (30 new entries) vs first read|ns|StatsUpdate100k|StatsFirstRead100k|<= 0.05
'

echo
echo "figure | measured | target | verdict"
echo "--- | --- | --- | ---"
awk -v figs="$figures" '
  /^Benchmark/ {
    name = $1; sub(/^Benchmark/, "", name); sub(/-[0-9]+$/, "", name)
    for (i = 3; i < NF; i++) {
      if ($(i+1) == "ns/op") ns[name] = $i
      else if ($(i+1) == "MB/s") mbs[name] = $i
      else metric[name, $(i+1)] = $i
    }
  }
  END {
    n = split(figs, lines, "\n")
    for (k = 1; k <= n; k++) {
      if (lines[k] == "") continue
      split(lines[k], f, "|")
      v = ""
      if (f[2] == "ns" && ns[f[3]] != "" && ns[f[4]] > 0) v = ns[f[3]] / ns[f[4]]
      if (f[2] == "mbs" && mbs[f[3]] != "" && mbs[f[4]] > 0) v = mbs[f[3]] / mbs[f[4]]
      if (f[2] == "m" && ((f[3], f[4]) in metric)) v = metric[f[3], f[4]]
      if (f[2] == "abs" && ns[f[3]] != "") v = ns[f[3]]
      split(f[5], t, " ")
      if (v == "") { printf "%s | not measured | %s | -\n", f[1], f[5]; continue }
      ok = (t[1] == "<=") ? (v + 0 <= t[2] + 0) : (v + 0 >= t[2] + 0)
      printf "%s | %.3g | %s | %s\n", f[1], v, f[5], ok ? "met" : "MISSED"
    }
  }' "$out" | tee "$out.summary"
