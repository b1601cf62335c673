#!/bin/sh
# Runs the placement benchmark and checks its targets as ratios measured in the same run:
# median decision time under 1 ms (1,152 GPUs) and 10 ms (16,384 GPUs), and at most 20x the
# firstfit policy's time on the same case. Usage: contrib/bench/run.sh [REPETITIONS]
set -eu
usage() { sed -n '2,4p' "$0"; }
case $#:${1:-} in
  0:|1:[1-9]|1:[1-9][0-9]) ;;
  1:-h|1:--help) usage; exit 0 ;;
  *) echo "run.sh: REPETITIONS is a whole number from 1 to 99, once: $*" >&2; usage >&2; exit 2 ;;
esac
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${NVLPLACE_BUILD_DIR:-$ROOT/build}
"$ROOT/contrib/build.sh" --target place_bench
OUT=$(mktemp)
"$BUILD/contrib/place_bench" --benchmark_repetitions="${1:-5}" --benchmark_report_aggregates_only=true \
  --benchmark_out="$OUT" --benchmark_out_format=json >/dev/null
python3 - "$OUT" <<'PY'
import json, sys
runs = json.load(open(sys.argv[1]))["benchmarks"]
med = {r["run_name"]: r["real_time"] for r in runs if r.get("aggregate_name") == "median"}
bad = 0
print(f"{'case':34} {'topo us':>9} {'firstfit us':>12} {'ratio':>6}  target")
for name, t in sorted(med.items()):
    if "/topo/" not in name:
        continue
    base = med[name.replace("/topo/", "/firstfit/")]
    limit = 1000 if name.startswith("nvl72") else 10000
    ok = t < limit and t <= 20 * base
    bad += not ok
    print(f"{name:34} {t:9.0f} {base:12.0f} {t / base:6.2f}  <{limit} us, <=20x: {'ok' if ok else 'MISSED'}")
sys.exit(1 if bad else 0)
PY
