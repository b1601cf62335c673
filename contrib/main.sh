#!/bin/sh
# The main job on the bundled default cluster (configs/lab-h100.yaml, or the file given):
# validate it, describe it, and write the Slurm files that make even stock cons_tres place
# better, into out/.
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${NVLPLACE_BUILD_DIR:-$ROOT/build}
CONFIG=${1:-$ROOT/configs/lab-h100.yaml}
OUT=${NVLPLACE_OUT:-$ROOT/out}
"$ROOT/contrib/setup.sh"
"$ROOT/contrib/build.sh" --target nvlplace
NVL="$BUILD/contrib/nvlplace"
echo "== nvlplace validate $CONFIG"
"$NVL" validate "$CONFIG"
echo "== nvlplace show $CONFIG"
"$NVL" show "$CONFIG"
echo "== nvlplace export slurm $CONFIG --out-dir $OUT/slurm"
"$NVL" export slurm "$CONFIG" --out-dir "$OUT/slurm"
