#!/usr/bin/env bash
# validation/scripts/power_probe.sh refuses bad arguments with exit 2 before it needs any GPU tool,
# and without nvidia-smi or nvcc on the PATH exits 5 naming the missing tool.
# Usage: tests/power_probe_script_test.sh SCRIPT
set -uo pipefail
script=$1
status=0
expect() {  # expect EXIT TEXT ARGS...: the script's exit code and a piece of its message
  local want=$1 text=$2
  shift 2
  out=$(PATH=/usr/bin:/bin "$script" "$@" 2>&1); rc=$?
  if [[ $rc -ne $want || "$out" != *"$text"* ]]; then
    echo "FAIL power_probe.sh $*: exit $rc (want $want), output: $out"; status=1
  else
    echo "ok power_probe.sh $*: exit $rc"
  fi
}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
expect 2 "usage:"
expect 2 "from 2 to 60" "$work/out" 1
expect 2 "from 2 to 60" "$work/out" six
if ! PATH=/usr/bin:/bin command -v nvidia-smi >/dev/null || ! PATH=/usr/bin:/bin command -v nvcc >/dev/null; then
  expect 5 "not found" "$work/out" 6
fi
exit $status
