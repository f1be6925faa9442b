#!/usr/bin/env bash
# What a model of the validation kernels needs beyond run_suite.sh's counters, from an H100/H200 in
# about two minutes: the kernels' machine code and resource use, every raw Nsight Compute metric of
# one forward and one backward run at each head dim (the instruction mix, occupancy, L1 and L2
# behaviour), the memory probe's DRAM bytes with the caches as the timed launches leave them, and
# the dispatch, memory, L2 and L1 probes' own output.
#
# Usage: validation/scripts/profile_detail.sh OUTDIR
# Writes OUTDIR/{ref_kernels.sass, ncu_raw.csv, memory_probe_ncu.csv, l2_probe_ncu.csv, detail.log}.
# Exit: 0 done; 2 bad arguments; 4 no NVIDIA GPU found; 5 nvcc, ncu or cuobjdump missing.
set -uo pipefail
[[ $# == 1 ]] || { echo "usage: $0 OUTDIR" >&2; exit 2; }
out=$1
here=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out" || exit 2
for tool in nvcc ncu cuobjdump nvidia-smi; do
  command -v "$tool" >/dev/null || { echo "profile_detail: $tool not found" >&2; exit 5; }
done
nvidia-smi -L >/dev/null 2>&1 || { echo "profile_detail: no NVIDIA GPU found" >&2; exit 4; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
log="$out/detail.log"
cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d '.[:space:]')
bin="$work/attnsim_gpu"
{
  echo "== $(date -u) $(nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv,noheader)"
  echo "== nvcc -Xptxas -v (registers, shared memory, spills per kernel)"
  nvcc -x cu "-gencode=arch=compute_${cc},code=sm_${cc}" -O2 -std=c++17 -Xptxas -v "$here/harness/harness_main.cpp" -o "$bin" 2>&1
} >"$log"
[[ -x "$bin" ]] || { echo "profile_detail: the harness did not build (see $log)" >&2; exit 1; }
cuobjdump --dump-sass "$bin" >"$out/ref_kernels.sass" 2>>"$log"

# Every raw metric of one forward and one backward run per head dim (B=1, 16 heads, N=4096, dense).
: >"$out/ncu_raw.csv"
for d in 128 64; do
  for direction in fwd bwd; do
    echo "== ncu --set full: $direction d=$d" | tee -a "$log" >>"$out/ncu_raw.csv"
    ncu --clock-control none --set full --csv --page raw --print-units base -k "regex:attention_${direction}" \
        "$bin" --direction "$direction" --batch 1 --heads 16 --seqlen 4096 --head-dim "$d" \
        --warmup 0 --reps 1 --no-check --csv "$work/discard.csv" >>"$out/ncu_raw.csv" 2>>"$log"
  done
done

# The memory probe's launches as timed: no cache flush between them, so the DRAM bytes show what
# the L2 kept from one launch to the next.
ncu --clock-control none --cache-control none --csv --print-units base -k regex:memory_probe \
    --metrics dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct,gpu__time_duration.sum,lts__t_sectors_srcunit_tex_op_read.sum,sm__cycles_elapsed.avg.per_second \
    "$bin" --memory-probe >"$out/memory_probe_ncu.csv" 2>>"$log"
# The L2 probe with ncu's cache control (each launch cold): what its read streams re-read from DRAM,
# what its one-pass writes evict, and what crosses between the L2's partitions.
ncu --clock-control none --cache-control all --csv --print-units base -k regex:memory_probe \
    --metrics dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_srcunit_ltcfabric.sum,lts__t_sectors_srcunit_ltcfabric_lookup_miss.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_write.sum,gpu__time_duration.sum \
    "$bin" --l2-probe >"$out/l2_probe_ncu.csv" 2>>"$log"
{
  echo "== memory probe"
  "$bin" --memory-probe
  echo "== L2 probe"
  "$bin" --l2-probe
  echo "== L1 probe (ways, set index and capacity beside 0 and 195 KiB of shared memory)"
  "$bin" --l1-probe
  echo "== dispatch probe"
  "$bin" --dispatch-probe
  echo "== $(date -u) done"
} >>"$log" 2>&1
