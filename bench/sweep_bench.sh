#!/usr/bin/env bash
# Sweep throughput and parallel efficiency (docs/performance.md): runs shard 0 of N of the
# 1,000-point benchmark sweep with one thread and with two, checks that both give identical
# results, and extrapolates the whole sweep's time on two cores; with SHARDS = full, runs the
# whole sweep once on two threads and reports its wall time.
# Usage: bench/sweep_bench.sh [ATTNSIM] [SHARDS|full] [exact|approximate]
#   (default build/release/attnsim, 25 -> 40 points, exact tags)
set -euo pipefail
attnsim=${1:-build/release/attnsim}
shards=${2:-25}
tags=${3:-exact}
spec="$(dirname "$0")/sweep_1000.toml"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [ "$tags" != exact ]; then  # the same points in the engine's other tag mode
  sed "s/^\[base\]$/[base]\ntags = \"$tags\"/" "$spec" >"$work/spec.toml"
  spec="$work/spec.toml"
fi
seconds() { local t0 t1; t0=$(date +%s.%N); "$@"; t1=$(date +%s.%N); awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }'; }
if [ "$shards" = full ]; then
  t=$(seconds "$attnsim" sweep "$spec" -o "$work/full" --threads 2 -q 2>/dev/null)
  points=$(($(wc -l <"$work/full/results.csv") - 1))
  failed=$(grep -c ',failed,' "$work/full/results.csv" || true)
  awk -v p="$points" -v f="$failed" -v t="$t" 'BEGIN {
    printf "points %d (%d failed)\n2 threads %.1f s (%.2f s/point)\n1000 points on 2 threads: %.0f s (target 300 s)\n", p, f, t, t / p, 1000 * t / p
  }'
  exit 0
fi
t1=$(seconds "$attnsim" sweep "$spec" -o "$work/t1" --threads 1 --shard "0/$shards" -q 2>/dev/null)
t2=$(seconds "$attnsim" sweep "$spec" -o "$work/t2" --threads 2 --shard "0/$shards" -q 2>/dev/null)
cmp -s "$work/t1/results.csv" "$work/t2/results.csv" || { echo "results differ between 1 and 2 threads" >&2; exit 1; }
points=$(($(wc -l <"$work/t1/results.csv") - 1))
awk -v p="$points" -v a="$t1" -v b="$t2" 'BEGIN {
  printf "points %d\n1 thread  %.1f s (%.2f s/point)\n2 threads %.1f s (%.2f s/point)\n", p, a, a / p, b, b / p
  printf "parallel efficiency 1->2 threads: %.1f %%\n", 100 * a / (2 * b)
  printf "1000 points on 2 threads (extrapolated): %.0f s (target 300 s)\n", 1000 * b / p
}'
