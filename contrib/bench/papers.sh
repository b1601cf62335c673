#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The replay's figures beside the papers' published ones (issue 27, point 4), as markdown:
#  (a) FGD (ATC'23): Alibaba openb (../shared/data) on its real node list (1,213 nodes, 6,212
#      GPUs; contrib/replay/openb_topology.py), policies topo, pack, firstfit, random: as
#      recorded (unallocated_gpus_mean), and inflated as FGD does (pods arrive, none leave)
#      with the GPUs left unallocated at 80-120% of the cluster's GPUs arrived;
#  (b) Arnold (NeurIPS'25): a synthetic multi-node trace (gen_synthetic_trace.py, TP 4/8,
#      PP 1/2/4, 8 to 1,024 GPUs) on an irregular fabric (tests/fixtures/irregular, imported:
#      304 nodes, 1,964 GPUs, leaves of 2-8 nodes) and a rail-optimized one (gen_fabric.py
#      h100-rail 9600: 9,728 H100, 38 scalable units), the DP groups' spread per switch tier,
#      firstfit / topo beside Arnold's 1.67x, and the cost model's step time.
# Needs the built CLI (contrib/build.sh --target nvlplace); builds nothing. One replay at a
# time, each on one thread. Writes OUT/papers.md and each replay's summary.json, jobs.csv,
# report.html under OUT.
# Usage: contrib/bench/papers.sh [--out DIR] [--jobs N] [--seed S] [--load-scale X]
#   defaults: OUT $NVLPLACE_BUILD_DIR/bench/papers (build/bench/papers), 20000 jobs, seed 7,
#   load scale 1 (the generator's arrivals: about 90% of the cluster busy).
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${NVLPLACE_BUILD_DIR:-$ROOT/build}
DATA=${NVLPLACE_SHARED_DATA:-$ROOT/../shared/data}
usage() { sed -n '3,18p' "$0" | sed 's/^# \{0,1\}//'; }
bad() { echo "papers.sh: $*" >&2; usage >&2; exit 2; }
OUT=$BUILD/bench/papers
JOBS=20000
SEED=7
LOAD=1
while [ $# -gt 0 ]; do
  case $1 in
    -h|--help) usage; exit 0 ;;
    --out|--jobs|--seed|--load-scale)
      [ $# -ge 2 ] || bad "$1 needs a value"
      case $1 in
        --out) OUT=$2 ;; --jobs) JOBS=$2 ;; --seed) SEED=$2 ;; --load-scale) LOAD=$2 ;;
      esac
      shift 2 ;;
    *) bad "unknown argument $1" ;;
  esac
done
case $JOBS in ''|*[!0-9]*) bad "--jobs takes a whole number" ;; esac
case $SEED in ''|*[!0-9]*) bad "--seed takes a whole number" ;; esac
case $LOAD in ''|*[!0-9.]*|*.*.*) bad "--load-scale takes a number" ;; esac
[ -n "$OUT" ] || bad "--out needs a directory"
NVL="$BUILD/contrib/nvlplace"
[ -x "$NVL" ] || { echo "papers.sh: no $NVL: build it first (contrib/build.sh --target nvlplace)" >&2; exit 1; }
PODS="$DATA/alibaba-openb-2023/openb_pod_list_default.first6000.csv"
NODES="$DATA/alibaba-openb-2023/openb_node_list_gpu_node.csv"
[ -r "$PODS" ] && [ -r "$NODES" ] || { echo "papers.sh: no openb files under $DATA" >&2; exit 1; }
HELP="$ROOT/contrib/bench/papers.py"
mkdir -p "$OUT"
replay() {  # replay LABEL ARGS...: one replay, its wall time on stderr
  label=$1; shift
  /usr/bin/time -f "%e %M" -o "$OUT/time" "$NVL" replay --threads 1 "$@" >"$OUT/$label.log" 2>&1 \
    || { cat "$OUT/$label.log" >&2; exit 1; }
  read -r secs kb <"$OUT/time"
  printf '%-28s %7.1f s  %5d MB peak\n' "$label" "$secs" $((kb / 1024)) >&2
}
# (a) openb on its node list.
python3 "$ROOT/contrib/replay/openb_topology.py" "$NODES" >"$OUT/openb.yaml"
replay openb-recorded --topology "$OUT/openb.yaml" --trace "$PODS" \
  --policies topo,pack,firstfit,random --out "$OUT/openb-recorded"
gpus=$(python3 -c "import json; print(json.load(open('$OUT/openb-recorded/summary.json'))['topology']['gpus'])")
python3 "$HELP" openb-inflate "$PODS" --gpus "$gpus" --to 1.2 >"$OUT/openb-inflated.csv"
replay openb-inflated --topology "$OUT/openb.yaml" --trace "$OUT/openb-inflated.csv" \
  --trace-format openb --policies topo,pack,firstfit,random --out "$OUT/openb-inflated"
# (b) the synthetic multi-node trace on two fabrics.
"$NVL" import slurm --topology "$ROOT/tests/fixtures/irregular/topology.conf" \
  --gres "$ROOT/tests/fixtures/irregular/gres.conf" --name irregular -o "$OUT/irregular.yaml"
python3 "$ROOT/contrib/tools/gen_fabric.py" h100-rail 9600 --out "$OUT/rail.yaml"
runs=
for fabric in irregular rail; do
  g=$("$NVL" show "$OUT/$fabric.yaml" --format json |
      python3 -c "import json,sys; d=json.load(sys.stdin); print(d['counts']['gpus'])")
  python3 "$ROOT/contrib/replay/gen_synthetic_trace.py" "$JOBS" "$SEED" "$g" >"$OUT/synthetic-$fabric.csv"
  replay "synthetic-$fabric" --topology "$OUT/$fabric.yaml" --trace "$OUT/synthetic-$fabric.csv" \
    --policies topo,pack,firstfit,random --load-scale "$LOAD" --out "$OUT/synthetic-$fabric"
  runs="$runs --run $fabric=$OUT/synthetic-$fabric"
done
{
  echo "# The replay beside FGD (ATC'23) and Arnold (NeurIPS'25)"
  echo
  echo "contrib/bench/papers.sh --jobs $JOBS --seed $SEED --load-scale $LOAD, $(date -u +%Y-%m-%d)"
  echo
  echo "## Unallocated GPUs (FGD)"
  echo
  python3 "$HELP" openb-table --recorded "$OUT/openb-recorded" --inflated "$OUT/openb-inflated" \
    --points 0.8,0.9,0.95,1.0,1.2
  echo
  echo "## DP groups' spread and step time (Arnold)"
  echo
  # shellcheck disable=SC2086  # $runs: --run LABEL=DIR pairs, no spaces in OUT assumed
  python3 "$HELP" spread-table $runs
} >"$OUT/papers.md"
rm -f "$OUT/time"
cat "$OUT/papers.md"
echo "wrote $OUT/papers.md" >&2
