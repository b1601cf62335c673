#!/bin/sh
# Imports the irregular Slurm fabric (tests/fixtures/irregular), validates it, and checks that
# `show --format json` reports the node, GPU and per-tier switch counts that the generator
# wrote in the fixture's header comment. Usage: irregular.sh NVLPLACE_BINARY
set -eu
BIN=$1
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
"$BIN" import slurm --topology tests/fixtures/irregular/topology.conf \
  --gres tests/fixtures/irregular/gres.conf -o "$TMP/irregular.yaml"
"$BIN" validate "$TMP/irregular.yaml" >/dev/null
"$BIN" show "$TMP/irregular.yaml" --format json >"$TMP/show.json"
python3 - "$TMP/show.json" tests/fixtures/irregular/topology.conf <<'PY'
import json, re, sys
counts = json.load(open(sys.argv[1]))["counts"]
header = next(l for l in open(sys.argv[2]) if re.match(r"# \d+ nodes", l))
n, g, leaf, spine, core = map(int, re.findall(r"\d+", header)[:5])
got = (counts["nodes"], counts["gpus"], counts["switches_per_tier"]["leaf"],
       counts["switches_per_tier"]["spine"], counts["switches_per_tier"]["core"])
want = (n, g, leaf, spine, core)
print("nodes, GPUs, leaves, spines, cores:", got)
sys.exit(0 if got == want else f"want {want} from the fixture header, got {got}")
PY
