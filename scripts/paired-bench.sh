#!/usr/bin/env bash
# Two `wgdem bench` command lines measured side by side on a noisy 2-core host: each round runs
# both at the same time, one llvmpipe thread and one core each, and swaps the cores the next
# round, so that a slower core or a busy minute weighs on both. Prints each round's
# particle-steps/s and the ratio B / A; take the geometric mean over an even number of rounds.
#   bash scripts/paired-bench.sh ROUNDS "wgdem bench ... (A)" "wgdem bench ... (B)"
set -euo pipefail
rounds=$1
a_cmd=$2
b_cmd=$3
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
rate() { awk '/^particle_steps_per_s/ {print $2}' "$1"; }
for r in $(seq 1 "$rounds"); do
  if [ $((r % 2)) = 1 ]; then ca=0 cb=1; else ca=1 cb=0; fi
  LP_NUM_THREADS=1 taskset -c "$ca" $a_cmd >"$logs/a" 2>&1 &
  pid=$!
  LP_NUM_THREADS=1 taskset -c "$cb" $b_cmd >"$logs/b" 2>&1
  wait "$pid"
  a=$(rate "$logs/a")
  b=$(rate "$logs/b")
  echo "round $r: A (core $ca) $a, B (core $cb) $b, B/A $(awk -v a="$a" -v b="$b" 'BEGIN {printf "%.3f", b / a}')"
done
