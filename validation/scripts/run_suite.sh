#!/usr/bin/env bash
# The validation suite in one command on a GPU machine, from nothing to the error table: builds the
# harness for this machine's GPU, runs the grid of shapes (each checked against the CPU reference
# before anything is recorded), times it, collects the profiler counters with the clock left as
# the GPU runs it, writes one measurements CSV and, where attnsim is built, runs `attnsim validate`.
#
# Usage: validation/scripts/run_suite.sh [--quick] [--out FILE] [--attnsim PATH]
#   --quick     N in {1024, 4096}, head_dim 128 only (about a minute); default N 1k..16k, d 64 and 128
#   --out FILE  the measurements CSV (default validation/measurements/<gpu>_ref_kernels_<date>.csv)
# Exit: 0 done; 3 a kernel's results differ from the CPU reference (nothing of it recorded);
#       4 no GPU found; 5 the compiler or profiler for this GPU is missing; 2 bad arguments;
#       otherwise the harness's exit code of the first case that failed (validation/README.md).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
root=$(cd "$here/.." && pwd)
quick=0
out=""
attnsim="$root/build/release/attnsim"
while [[ $# -gt 0 ]]; do
  case "$1" in
    --quick) quick=1 ;;
    --out) out="$2"; shift ;;
    --attnsim) attnsim="$2"; shift ;;
    *) echo "run_suite: unknown argument '$1' (see the usage at the top of $0)" >&2; exit 2 ;;
  esac
  shift
done
need() { command -v "$1" >/dev/null || { echo "run_suite: $1 not found: $2" >&2; exit 5; }; }

work=$(mktemp -d)
sampler=""
cleanup() { [[ -n "$sampler" ]] && kill "$sampler" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT

# The GPU and its toolchain.
if command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1; then
  vendor=nvidia
  need nvcc "install the CUDA toolkit (nvcc) or put it on the PATH"
  need ncu "install Nsight Compute (ncu) or put it on the PATH"
  cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d '.[:space:]')
  gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
  nvcc -x cu "-gencode=arch=compute_${cc},code=sm_${cc}" -O2 -std=c++17 "$here/harness/harness_main.cpp" -o "$work/attnsim_gpu"
elif command -v rocminfo >/dev/null && rocminfo 2>/dev/null | grep -q 'gfx9'; then
  vendor=amd
  need hipcc "install ROCm >= 6 (hipcc; Debian's ROCm 5.2 cannot target gfx942)"
  need rocprofv3 "install ROCm >= 6.2 (rocprofv3)"
  gfx=$(rocminfo | grep -o -m1 'gfx9[0-9a-f]*')
  gpu=$(rocminfo | grep -m1 'Marketing Name' | sed 's/.*: *//')
  hipcc -x hip "--offload-arch=${gfx}" -O2 -std=c++17 "$here/harness/harness_main.cpp" -o "$work/attnsim_gpu"
else
  echo "run_suite: no GPU found (neither nvidia-smi nor rocminfo sees one)" >&2
  exit 4
fi
bin="$work/attnsim_gpu"
tag=$(echo "$gpu" | tr '[:upper:] ' '[:lower:]_' | tr -cd 'a-z0-9_')
[[ -n "$out" ]] || out="$here/measurements/${tag}_ref_kernels_$(date -u +%Y%m%d).csv"
echo "run_suite: $gpu ($vendor), writing $out"

# The clocks the GPU ran at while a command ran (sampled every 100 ms; NVIDIA) or after it (AMD).
# nvidia-smi's clocks.sm is the clock applied, not the effective one: on an H200 it read 1980 MHz
# while ncu's cycles over duration (the ..._SM clock seen ... (ncu)" of the counter rows) and the
# matrix rate probe's cycles over time gave 1780-1936 MHz for kernels of the same durations.
clocks_during() {
  if [[ $vendor == nvidia ]]; then
    nvidia-smi --query-gpu=clocks.sm,clocks.mem --format=csv,noheader,nounits -lms 100 >"$work/clocks" 2>/dev/null &
    sampler=$!
    "$@"
    local rc=$?
    kill "$sampler" 2>/dev/null; wait "$sampler" 2>/dev/null || true; sampler=""
    seen=$(awk -F', *' 'NF >= 2 { if (!n || $1 < lo) lo = $1; if ($1 > hi) hi = $1; m = $2; n++ }
                        END { if (n) printf "SM clock applied %d-%d MHz; memory %d MHz (nvidia-smi clocks.sm; %d samples; not the effective clock under load: an H200 read 1980 where its cycles over time gave 1780-1936)", lo, hi, m, n }' "$work/clocks")
    seen="$seen; driver $(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1)"
    seen=$(printf '%s' "$seen" | tr -d ',"/&\\')
    return $rc
  else
    "$@"
    local rc=$?
    seen="clocks after the run: $(rocm-smi --showclocks 2>/dev/null | grep -E 'sclk|mclk' | sed 's/.*GPU\[[0-9]*\][ :]*//' | tr '\n' ' ')"
    seen=$(printf '%s' "$seen" | tr -d ',"/&\\')
    return $rc
  fi
}

# The profiler counters of one run of the shape in "$@" (the harness's flags), as measurement rows.
profile() {
  local -a files=()
  if [[ $vendor == nvidia ]]; then
    ncu --clock-control none --cache-control all --csv --print-units base -k regex:attention \
        --metrics dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_red.sum,lts__t_sectors_srcunit_ltcfabric.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum,sm__cycles_elapsed.avg.per_second \
        "$bin" "$@" --warmup 0 --reps 1 --no-check --csv "$work/discard.csv" >"$work/ncu.csv"
    files=(--profile-csv "$work/ncu.csv")
  else
    local pass=0
    for pmc in "TCC_EA0_RDREQ TCC_EA0_RDREQ_32B TCC_BUBBLE" "TCC_EA0_WRREQ TCC_EA0_WRREQ_64B SQ_INSTS_VALU_MFMA_MOPS_BF16" \
               "TCP_TOTAL_CACHE_ACCESSES TCP_TCC_READ_REQ TCP_TCC_WRITE_REQ"; do
      pass=$((pass + 1))
      # shellcheck disable=SC2086
      rocprofv3 --pmc $pmc --output-format csv -d "$work/prof$pass" -- \
          "$bin" "$@" --warmup 0 --reps 1 --no-check --csv "$work/discard.csv" >/dev/null
      files+=(--profile-csv "$(find "$work/prof$pass" -name '*counter_collection.csv' | head -1)")
    done
  fi
  "$bin" "$@" "${files[@]}" --csv "$out"
}

# The dispatch probe (validation/README.md): does an XCD run ahead of the others? Kept beside the
# measurements; a failure here does not stop the suite.
"$bin" --dispatch-probe | tee "${out%.csv}_dispatch_probe.txt" || echo "run_suite: the dispatch probe failed" >&2
# The matrix rate probe: the matrix FLOPs per clock and the result latency of the kernels' own
# instruction (on H100/H200 the legacy mma.sync, the configs' H200-PROBE). Kept the same way.
"$bin" --matrix-rate-probe | tee "${out%.csv}_matrix_rate_probe.txt" || echo "run_suite: the matrix rate probe failed" >&2

# The memory probe: stream read, write and copy bandwidth of the whole GPU, each beside the `attnsim
# micro` command that simulates it. Kept the same way.
"$bin" --memory-probe | tee "${out%.csv}_memory_probe.txt" || echo "run_suite: the memory probe failed" >&2
# The placement probe: which compute unit each workgroup runs on, with as many per unit as the
# d=128 forward fits (its own LDS, `fwd`) and with no LDS. Kept the same way.
{ "$bin" --placement-probe fwd && "$bin" --placement-probe 0; } | tee "${out%.csv}_placement_probe.txt" ||
  echo "run_suite: the placement probe failed" >&2

if [[ $quick == 1 ]]; then seqlens=(1024 4096); dims=(128); else seqlens=(1024 2048 4096 8192 16384); dims=(64 128); fi
failed=0
# Shortest sequences first, every kind of case at each length: a run stopped early (a time limit on
# a borrowed machine) keeps whole sets of cases rather than one direction only.
for n in "${seqlens[@]}"; do
  for d in "${dims[@]}"; do
    for direction in fwd bwd; do
      for causal in 0 1; do
        batch=$((16384 / n > 0 ? 16384 / n : 1))
        shape=(--direction "$direction" --batch "$batch" --heads 16 --seqlen "$n" --head-dim "$d")
        [[ $causal == 1 ]] && shape+=(--causal)
        echo "run_suite: ${shape[*]}"
        if clocks_during "$bin" "${shape[@]}" --csv "$work/timed.csv"; then
          # The timed rows get the clocks seen while they ran, inside their quoted conditions field.
          [[ -s "$out" ]] || head -1 "$work/timed.csv" >"$out"
          tail -n +2 "$work/timed.csv" | sed "s/\"\$/; ${seen}\"/" >>"$out"
          rm -f "$work/timed.csv"
          # A profiler that fails (no access to the counters, say) loses this case's counters only.
          profile "${shape[@]}" --conditions "$seen" || echo "run_suite: ${shape[*]}: the profiler failed; its time is recorded, its counters not" >&2
        else
          rc=$?
          if [[ $rc == 3 ]]; then failed=3; elif [[ $failed == 0 ]]; then failed=$rc; fi
          echo "run_suite: ${shape[*]} failed (exit $rc); nothing recorded for it" >&2
        fi
      done
    done
  done
done
if [[ ! -s "$out" ]]; then
  echo "run_suite: nothing was measured" >&2
  exit $((failed ? failed : 1))
fi
echo "run_suite: measurements in $out"
if [[ -x "$attnsim" ]]; then
  "$attnsim" validate "$out" || true
else
  echo "run_suite: attnsim is not built here; on a machine with it: attnsim validate $out"
fi
exit "$failed"
