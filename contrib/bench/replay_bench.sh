#!/bin/sh
# Replay benchmark: the Alibaba openb trace (../shared/data) on a topology built from its node
# list (1,213 GPU nodes, 6,212 GPUs) with all four policies, and a synthetic 100,000-job
# multi-node trace on configs/h100-multi-su-16k.yaml, one policy at a time on one core.
# Prints wall time and peak memory; exits 1 if a target is missed (openb under 5 s for all
# four policies; 100,000 jobs under 60 s per policy).
# With --scale (issue 12), instead: a synthetic 1,000,000-job trace on a generated
# rail-optimized H100 fabric of 131,072 GPUs (contrib/tools/gen_fabric.py h100-rail 131072),
# each policy alone on one core; target under 60 s per policy, peak memory printed.
# Usage: contrib/bench/replay_bench.sh [--scale]
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${NVLPLACE_BUILD_DIR:-$ROOT/build}
DATA=${NVLPLACE_SHARED_DATA:-$ROOT/../shared/data}
usage() { sed -n '2,10p' "$0"; }
SCALE=
case $#:${1:-} in
  0:) ;;
  1:--scale) SCALE=1 ;;
  1:-h|1:--help) usage; exit 0 ;;
  *) echo "replay_bench.sh: unknown arguments: $*" >&2; usage >&2; exit 2 ;;
esac
"$ROOT/contrib/build.sh" --target nvlplace >/dev/null
NVL="$BUILD/contrib/nvlplace"
WORK="$BUILD/replay-bench"
mkdir -p "$WORK"
python3 "$ROOT/contrib/replay/openb_topology.py" "$DATA/alibaba-openb-2023/openb_node_list_gpu_node.csv" \
  >"$WORK/openb.yaml"
status=0
measure() {  # measure LIMIT_SECONDS LABEL COMMAND...
  limit=$1; label=$2; shift 2
  /usr/bin/time -f "%e %M" -o "$WORK/time" "$@" >"$WORK/out" 2>&1 || { cat "$WORK/out"; exit 1; }
  read -r secs kb <"$WORK/time"
  verdict=$(python3 -c "print('ok' if $secs < $limit else 'MISSED')")
  [ "$verdict" = ok ] || status=1
  printf '%-44s %7.2f s  %6d MB peak  (target < %s s: %s)\n' "$label" "$secs" $((kb / 1024)) "$limit" "$verdict"
}
if [ -n "$SCALE" ]; then
  python3 "$ROOT/contrib/tools/gen_fabric.py" h100-rail 131072 --out "$WORK/h100-rail-131072.yaml"
  python3 "$ROOT/contrib/replay/gen_synthetic_trace.py" 1000000 7 131072 >"$WORK/synthetic-1m.csv"
  for p in topo pack firstfit random; do
    measure 60 "synthetic 1,000,000 jobs on 131,072 GPUs, $p" \
      "$NVL" replay --topology "$WORK/h100-rail-131072.yaml" \
      --trace "$WORK/synthetic-1m.csv" --policies "$p" --threads 1 --out "$WORK/scale-$p"
    rm -rf "$WORK/scale-$p"  # its jobs.csv is about 400 MB
  done
  exit $status
fi
python3 "$ROOT/contrib/replay/gen_synthetic_trace.py" 100000 7 >"$WORK/synthetic-100k.csv"
measure 5 "openb 4,568 pods, 4 policies" \
  "$NVL" replay --topology "$WORK/openb.yaml" \
  --trace "$DATA/alibaba-openb-2023/openb_pod_list_default.first6000.csv" --out "$WORK/openb"
for p in topo pack firstfit random; do
  measure 60 "synthetic 100,000 jobs on 16,384 GPUs, $p" \
    "$NVL" replay --topology "$ROOT/configs/h100-multi-su-16k.yaml" \
    --trace "$WORK/synthetic-100k.csv" --policies "$p" --threads 1
done
exit $status
