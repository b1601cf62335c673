#!/bin/sh
# The main job on the bundled default cluster (configs/lab-h100.yaml, or the file given):
# validate it, describe it, write the Slurm files that make even stock cons_tres place
# better (out/slurm/), place a TP=8 job on a partly busy cluster with its explanation, and
# replay a small trace under the four policies (out/replay/report.html), then start a real
# local Slurm cluster on it with select/cons_tres_nvlplace and show where a few srun/sbatch
# jobs with and without nvlplace options land (contrib/cluster/demo.sh; needs root). The
# cluster is stopped at the end; NVLPLACE_KEEP_CLUSTER=1 leaves it running.
# Usage: contrib/main.sh [CLUSTER.yaml]
set -eu
usage() { sed -n '2,9p' "$0"; }
case $#:${1:-} in
  1:-h|1:--help) usage; exit 0 ;;
  0:|1:[!-]*) ;;
  *) echo "main.sh: unknown arguments: $*" >&2; usage >&2; exit 2 ;;
esac
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${NVLPLACE_BUILD_DIR:-$ROOT/build}
CONFIG=${1:-$ROOT/configs/lab-h100.yaml}
OUT=${NVLPLACE_OUT:-$ROOT/out}
"$ROOT/contrib/setup.sh"
if [ -d "$ROOT/third_party/slurm-src/src" ]; then
  "$ROOT/contrib/build.sh" --target nvlplace slurm_plugins
else
  "$ROOT/contrib/build.sh" --target nvlplace
fi
NVL="$BUILD/contrib/nvlplace"
run() { echo "== nvlplace $*"; "$NVL" "$@"; }
run validate "$CONFIG"
run show "$CONFIG"
run export slurm "$CONFIG" --out-dir "$OUT/slurm" --force  # out/ is this job's own
mkdir -p "$OUT"
# A cluster partly busy: the first node, half of the second, two GPUs of the fifth.
"$NVL" show "$CONFIG" --format json | python3 -c '
import json, sys
nodes = [n["name"] for n in json.load(sys.stdin)["nodes"]]
print(nodes[0]); print(nodes[1] + ":0-3")
if len(nodes) > 4: print(nodes[4] + ":0,1")
' >"$OUT/busy.txt"
echo "== busy GPUs ($OUT/busy.txt):"; cat "$OUT/busy.txt"
run place --topology "$CONFIG" --busy "$OUT/busy.txt" --gpus 16 --tp 8
run place --topology "$CONFIG" --busy "$OUT/busy.txt" --gpus 16 --tp 8 --policy firstfit
run replay --topology "$CONFIG" --trace "$ROOT/tests/fixtures/traces/native.csv" \
  --policies topo,pack,firstfit,random --out "$OUT/replay"

if [ "$(id -u)" -ne 0 ]; then
  echo "== skipping the local Slurm cluster demo: it runs several slurmd and needs root"
  exit 0
fi
echo "== a real Slurm cluster on this machine ($CONFIG)"
NVLPLACE_BUILD_DIR=$BUILD "$ROOT/contrib/cluster/demo.sh" --topology "$CONFIG"
if [ "${NVLPLACE_KEEP_CLUSTER:-0}" != 1 ]; then
  NVLPLACE_BUILD_DIR=$BUILD "$ROOT/contrib/cluster/stop.sh"
  echo "== cluster stopped (NVLPLACE_KEEP_CLUSTER=1 keeps it running)"
fi
