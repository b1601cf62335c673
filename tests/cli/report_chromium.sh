#!/bin/sh
# The replay report renders in a real browser: replays a small trace under the four
# policies and loads report.html in headless Chromium (Debian's chromium package) without
# network access, twice:
# - with plain SVG plots (--chart-lib none): checks from the DOM after layout that all 4
#   plots and every policy's line in each (4 x 4) were drawn with a non-empty bounding box;
# - with the charting library inlined (ECharts, fetched by contrib/setup.sh; that part is
#   skipped, exit 77, when it is not there): at two window sizes, a screenshot each (kept in
#   report-screenshots/ beside the binary) and, from the DOM, every chart drawn with data
#   and no two labels of a chart overlapping.
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
    --policies topo,pack,firstfit,random --chart-lib none --out "$OUT/replay" \
    >"$OUT/replay.log" 2>&1; then
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

# The charts, drawn by the inlined library.
LIB=$ROOT/third_party/npm/echarts-5.5.1/echarts.min.js
if [ ! -f "$LIB" ]; then
  echo "SKIP: the SVG plots pass; no $LIB for the charts (contrib/setup.sh fetches it)"
  exit 77
fi
if ! "$BIN" replay --topology configs/lab-h100.yaml --trace tests/fixtures/traces/native.csv \
    --policies topo,pack,firstfit,random --chart-lib "$LIB" --out "$OUT/charts" \
    >"$OUT/charts.log" 2>&1; then
  cat "$OUT/charts.log"
  exit 1
fi
grep -q 'Licensed to the Apache Software Foundation' "$OUT/charts/report.html" ||
  { echo "FAIL: the library is not inlined in report.html"; exit 1; }
grep -qE '<script[^>]* src=|<link[^>]* href=' "$OUT/charts/report.html" &&
  { echo "FAIL: report.html loads something from outside itself"; exit 1; }
SHOTS=$(dirname "$BIN")/report-screenshots
mkdir -p "$SHOTS"
status=0
for size in 1400,900 760,1000; do
  rm -f "$SHOTS/report-$size.png"
  for what in dom screenshot; do
    if [ $what = dom ]; then out="--dump-dom"; else out="--screenshot=$SHOTS/report-$size.png"; fi
    HOME=$OUT timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --no-first-run \
      --disable-extensions --user-data-dir="$OUT/profile" --virtual-time-budget=5000 \
      --window-size="$size" $out "file://$OUT/charts/report.html" >"$OUT/$what.html" \
      2>"$OUT/chromium.log" || { echo "chromium exited $? at $size:"; tail -20 "$OUT/chromium.log"; exit 1; }
  done
  attr() { sed -n "s/.*<body[^>]* data-$1=\"\([^\"]*\)\".*/\1/p" "$OUT/dom.html" | head -1; }
  CHARTS=$(attr charts)
  WITH_DATA=$(attr charts-with-data)
  OVERLAPS=$(attr label-overlaps)
  echo "at $size: ${CHARTS:-no} charts, ${WITH_DATA:-no} with data, ${OVERLAPS:-no count of} overlapping labels $(attr overlap-where)"
  [ "${CHARTS:-0}" -ge 8 ] || { echo "FAIL: expected 8 charts at $size"; status=1; }
  [ "$WITH_DATA" = "$CHARTS" ] || { echo "FAIL: a chart without data at $size"; status=1; }
  [ "$OVERLAPS" = 0 ] || { echo "FAIL: overlapping labels at $size"; status=1; }
  # A PNG (its 8-byte signature) of the window's size.
  if [ "$(head -c 8 "$SHOTS/report-$size.png" | od -An -tx1 | tr -d ' ')" != 89504e470d0a1a0a ]; then
    echo "FAIL: no screenshot at $size"
    status=1
  fi
done
[ $status = 0 ] && echo "ok (screenshots in $SHOTS)"
exit $status
