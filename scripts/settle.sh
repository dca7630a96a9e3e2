# settle.sh defines settle, sourced by scripts/bench.sh and
# scripts/bench-against.sh. It appends what it says to "$out" (set by the
# caller).
#
# settle waits until the machine is nearly idle — less than 15 % of all CPU
# time busy over one second — for at most 20 s, so that a benchmark does not
# start under the background work the one before it left (a change keeper
# saving the 100,000-file tree's index, record journals compacted, dirty
# pages written back): that work landed on whichever figure came first.
settle() {
  local i busy
  for ((i = 0; i < 20; i++)); do
    busy=$(awk '/^cpu / { print $2+$3+$4+$7+$8, $5+$6 }' /proc/stat; sleep 1; awk '/^cpu / { print $2+$3+$4+$7+$8, $5+$6 }' /proc/stat)
    # shellcheck disable=SC2086
    busy=$(echo $busy | awk '{ b = $3 - $1; i = $4 - $2; print (b + i > 0) ? int(100 * b / (b + i)) : 0 }')
    ((busy < 15)) && return 0
  done
  echo "== (the machine stayed busy: $busy % of CPU time over the last second)" | tee -a "$out"
}
