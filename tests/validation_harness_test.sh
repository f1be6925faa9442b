#!/usr/bin/env bash
# The built validation harnesses (attnsim_gpu_hip, attnsim_gpu_cuda) on this machine: a bad shape
# exits 2 naming it; a run exits 4 saying "no GPU found" when the machine has no GPU of the build's
# vendor, or 0 when it has one and every kernel output matched the CPU reference.
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
done
exit $status
