#!/bin/sh
# The replay report renders in a real browser: replays a small trace under the four
# policies, loads report.html in headless Chromium (Debian's chromium package) without
# network access, and checks from the DOM after layout that all 4 plots and every policy's
# line in each (4 x 4) were drawn with a non-empty bounding box.
# Usage: report_chromium.sh NVLPLACE_BINARY
set -u
BIN=$1
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$CHROMIUM" ]; then
  echo "SKIP: chromium not installed (contrib/setup.sh installs it)"
  exit 77
fi
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
cd "$ROOT" || exit 1
if ! "$BIN" replay --topology configs/lab-h100.yaml --trace tests/fixtures/traces/native.csv \
    --policies topo,pack,firstfit,random --out "$OUT/replay" >"$OUT/replay.log" 2>&1; then
  cat "$OUT/replay.log"
  exit 1
fi
# Chromium wants a writable home; --no-sandbox because CI runs as root.
HOME=$OUT timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --no-first-run \
  --disable-extensions --user-data-dir="$OUT/profile" --virtual-time-budget=5000 \
  --dump-dom "file://$OUT/replay/report.html" >"$OUT/dom.html" 2>"$OUT/chromium.log"
RC=$?
if [ $RC -ne 0 ]; then
  echo "chromium exited $RC:"
  tail -20 "$OUT/chromium.log"
  exit 1
fi
PLOTS=$(sed -n 's/.*data-plots-rendered="\([0-9]*\)".*/\1/p' "$OUT/dom.html" | head -1)
SERIES=$(sed -n 's/.*data-series-rendered="\([0-9]*\)".*/\1/p' "$OUT/dom.html" | head -1)
echo "chromium drew ${PLOTS:-no} plots and ${SERIES:-no} policy lines"
[ "$PLOTS" = 4 ] || { echo "FAIL: expected 4 plots"; exit 1; }
[ "$SERIES" = 16 ] || { echo "FAIL: expected 16 policy lines (4 plots x 4 policies)"; exit 1; }
grep -q '<table id="summary">' "$OUT/dom.html" || { echo "FAIL: no summary table"; exit 1; }
[ "$(grep -c '<tr><td>' "$OUT/dom.html")" -ge 4 ] || { echo "FAIL: summary table lacks policy rows"; exit 1; }
echo ok
