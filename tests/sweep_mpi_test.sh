#!/usr/bin/env bash
# The MPI sweep mode: two ranks (rank 0 hands out points, rank 1 simulates) give the results of
# a threaded run, byte for byte, and a re-run resumes without simulating anything.
# Usage: sweep_mpi_test.sh ATTNSIM MPIEXEC SPEC
set -euo pipefail
attnsim=$1 mpiexec=$2 spec=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$attnsim" sweep "$spec" -o "$work/threads" --threads 2 -q 2>/dev/null
"$mpiexec" --allow-run-as-root --oversubscribe -np 2 "$attnsim" sweep "$spec" -o "$work/mpi" --mpi -q 2>"$work/log"
cmp "$work/threads/results.csv" "$work/mpi/results.csv"
cmp "$work/threads/results.jsonl" "$work/mpi/results.jsonl"
grep -q "6 simulated (4 ok, 2 failed)" "$work/log" || { cat "$work/log"; exit 1; }
"$mpiexec" --allow-run-as-root --oversubscribe -np 2 "$attnsim" sweep "$spec" -o "$work/mpi" --mpi -q 2>"$work/log2"
grep -q "6 already recorded, 0 simulated" "$work/log2" || { cat "$work/log2"; exit 1; }
cmp "$work/threads/results.csv" "$work/mpi/results.csv"
echo "sweep_mpi_test: ok"
