#!/usr/bin/env bash
# The SM clock and board power an H100/H200 settles at under each kind of sustained work (no work,
# matrix, FP32 FMAs, exponentials, an HBM read stream), the data attnsim's clock model is calibrated
# on (clock.power.*, docs/model.md): builds the harness, samples nvidia-smi's SM clock and power
# draw about every 100 ms while `attnsim_gpu --power-probe` runs, and joins the two per phase
# (`attnsim_gpu --power-join`). Changes no GPU setting. Takes about 5 x SECONDS + 1 min.
#
# Usage: validation/scripts/power_probe.sh OUTDIR [SECONDS]   (SECONDS per phase, 2-60, default 6)
# Writes OUTDIR/{power_probe.csv, power_probe.log, power_samples.csv}.
# Exit: 0 done; 2 bad arguments; 4 no NVIDIA GPU found; 5 nvcc or nvidia-smi missing; 1 otherwise.
set -uo pipefail
[[ $# == 1 || $# == 2 ]] || { echo "usage: $0 OUTDIR [SECONDS]" >&2; exit 2; }
out=$1
seconds=${2:-6}
if ! [[ $seconds =~ ^[0-9]+$ ]] || ((seconds < 2 || seconds > 60)); then
  echo "power_probe: SECONDS must be a whole number from 2 to 60, got '$seconds'" >&2
  exit 2
fi
here=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out" || exit 2
for tool in nvcc nvidia-smi; do
  command -v "$tool" >/dev/null || { echo "power_probe: $tool not found" >&2; exit 5; }
done
nvidia-smi -L >/dev/null 2>&1 || { echo "power_probe: no NVIDIA GPU found" >&2; exit 4; }
work=$(mktemp -d)
sampler=
trap '[[ -n $sampler ]] && kill "$sampler" 2>/dev/null; rm -rf "$work"' EXIT
cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d '.[:space:]')
bin="$work/attnsim_gpu"
log="$out/power_probe.log"
samples="$out/power_samples.csv"
nvcc -x cu "-gencode=arch=compute_${cc},code=sm_${cc}" -O2 -std=c++17 "$here/harness/harness_main.cpp" -o "$bin" >"$log" 2>&1 ||
  { echo "power_probe: the harness did not build (see $log)" >&2; exit 1; }
conditions="$(nvidia-smi --query-gpu=name,driver_version,power.limit,clocks.max.sm --format=csv,noheader | head -1); \
$(date -u +%Y-%m-%dT%H:%M:%SZ); clocks and power limit as the machine had them (not changed)"
# The sampler: "unix_ms,sm_mhz,power_w" lines.
(
  while :; do
    v=$(nvidia-smi --id=0 --query-gpu=clocks.sm,power.draw --format=csv,noheader,nounits 2>/dev/null | head -1 | tr -d ' ')
    [[ -n $v ]] && echo "$(date +%s%3N),$v"
    sleep 0.1
  done
) >"$samples" &
sampler=$!
"$bin" --power-probe "$seconds" >>"$log" 2>&1
rc=$?
kill "$sampler" 2>/dev/null
wait "$sampler" 2>/dev/null
sampler=
((rc == 0)) || { echo "power_probe: attnsim_gpu --power-probe failed (exit $rc, see $log)" >&2; exit 1; }
"$bin" --power-join "$log" "$samples" --conditions "$conditions" --csv "$out/power_probe.csv" || exit 1
cat "$out/power_probe.csv"
