#!/usr/bin/env bash
# The built validation harnesses (attnsim_gpu_hip, attnsim_gpu_cuda) on this machine: a bad shape
# exits 2 naming it; a run exits 4 saying "no GPU found" when the machine has no GPU of the build's
# vendor, or 0 when it has one and every kernel output matched the CPU reference; the power probe's
# join (--power-join) needs no GPU and gives each phase its median clock and power.
# Usage: tests/validation_harness_test.sh BINARY...
set -uo pipefail
status=0
for bin in "$@"; do
  out=$("$bin" --head-dim 96 2>&1); rc=$?
  if [[ $rc -ne 2 || "$out" != *"head_dim must be 64 or 128"* ]]; then
    echo "FAIL $bin --head-dim 96: exit $rc, output: $out"; status=1
  fi
  out=$("$bin" --direction both --heads 2 --seqlen 256 --causal --warmup 0 --reps 1 2>&1); rc=$?
  if [[ $rc -eq 4 && "$out" == *"no GPU found"* ]]; then
    echo "ok $bin: no GPU here (exit 4)"
  elif [[ $rc -eq 0 ]]; then
    echo "ok $bin: ran on a GPU and matched the CPU reference"
  else
    echo "FAIL $bin: exit $rc, output: $out"; status=1
  fi
  work=$(mktemp -d)
  printf 'power probe on Test GPU: 4 s per phase\npower-phase idle 1000 5000 0 0 -\npower-phase fma 5000 9000 100 2e+13 FLOP/s\n' >"$work/probe.log"
  for t in $(seq 0 250 9000); do
    if ((t > 5000)); then echo "$t,1755,650.5"; else echo "$t,345,80"; fi
  done >"$work/samples.csv"
  out=$("$bin" --power-join "$work/probe.log" "$work/samples.csv" --conditions "test" 2>&1); rc=$?
  if [[ $rc -ne 0 || "$out" != *'"Test GPU",fma,2e+13,FLOP/s,100,4.000,13,1755.0,650.5,"test"'* ]]; then
    echo "FAIL $bin --power-join: exit $rc, output: $out"; status=1
  else
    echo "ok $bin: --power-join"
  fi
  out=$("$bin" --power-probe 1 2>&1); rc=$?
  [[ $rc -eq 2 && "$out" == *"2 to 60"* ]] || { echo "FAIL $bin --power-probe 1: exit $rc, output: $out"; status=1; }
  rm -rf "$work"
done
exit $status
