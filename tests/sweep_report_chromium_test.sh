#!/usr/bin/env bash
# The sweep report renders in a real browser: headless Chromium loads the page from disk (no
# network) and the rendered DOM holds the charts and their marks.
# Usage: sweep_report_chromium_test.sh ATTNSIM CHROMIUM SPEC
set -euo pipefail
attnsim=$1 chromium=$2 spec=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$attnsim" sweep "$spec" -o "$work/out" -q 2>/dev/null
"$attnsim" sweep report "$work/out" 2>/dev/null
# --no-sandbox: CI runs as root, where Chromium's sandbox refuses to start.
timeout 120 "$chromium" --headless --no-sandbox --disable-gpu --disable-dev-shm-usage --user-data-dir="$work/profile" \
  --dump-dom "file://$work/out/report.html" >"$work/dom.html" 2>"$work/chromium.log" || { cat "$work/chromium.log"; exit 1; }
count() { grep -o "$1" "$work/dom.html" | wc -l; }
lines=$(count '<svg class="chart line"') bars=$(count '<svg class="chart bar"') polylines=$(count '<polyline') rects=$(count '<rect')
echo "rendered: $lines line charts, $bars bar charts, $polylines polylines, $rects rects"
# Two swept axes: a TFLOP/s and a time chart each, and a traffic chart each.
[[ $lines -eq 4 && $bars -eq 2 && $polylines -ge 4 && $rects -ge 24 ]]
timeout 120 "$chromium" --headless --no-sandbox --disable-gpu --disable-dev-shm-usage --user-data-dir="$work/profile" \
  --window-size=1000,1400 --screenshot="$work/shot.png" "file://$work/out/report.html" >/dev/null 2>&1
[[ $(stat -c %s "$work/shot.png") -gt 10000 ]]
echo "sweep_report_chromium_test: ok"
