#!/usr/bin/env bash
# bench.sh runs agentgate's benchmarks and prints each figure as a ratio
# against a baseline measured in the same run, beside its target.
# Raw `go test -bench` output is kept in bench.out for BENCHMARKS.md.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${BENCH_OUT:-bench.out}
: >"$out"

# Packages and the benchmarks to run in each (a regexp for -bench).
run() { # pkg regexp [benchtime]
  echo "== $1" | tee -a "$out"
  go test -run '^$' -bench "$2" -benchtime "${3:-1s}" -count 1 -tags migrated_fynedo "$1" 2>&1 | tee -a "$out"
}
