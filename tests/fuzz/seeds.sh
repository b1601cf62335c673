#!/bin/sh
# Writes the seed corpus of one fuzz target into OUT_DIR from the repository's own inputs
# (configs/, tests/fixtures/, and nvlplace's Slurm export when NVLPLACE is given), plus the
# hand-written seeds in tests/fuzz/seeds/TARGET/. Usage: seeds.sh TARGET OUT_DIR [NVLPLACE]
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
TARGET=$1 OUT=$2 NVL=${3:-}
F=$ROOT/tests/fixtures
rm -rf "$OUT"
mkdir -p "$OUT"
cd "$ROOT"

# put NAME FILE...: the files' concatenation as seed NAME.
put() { n=$1; shift; cat "$@" >"$OUT/$n"; }
# pair NAME FIRST SECOND: FIRST, a 0 byte, SECOND (two files in one input).
pair() { { cat "$2"; printf '\0'; cat "$3"; } >"$OUT/$1"; }

case $TARGET in
  hostlist)  # the hostlists of the bundled clusters, one per shape, and the syntax's corners
    i=0
    sed -n 's/.*\(names\|nodes\|switches\): *"\{0,1\}\([^"#]*[][][^"#]*\)"\{0,1\} *$/\2/p' \
      configs/*.yaml | awk '{ k = $0; gsub(/[0-9]+/, "0", k) } !seen[k]++' |
      while IFS= read -r h; do i=$((i + 1)); printf '%s' "$h" >"$OUT/config-$i"; done
    printf 'a[1-2,5]b[3-4]' >"$OUT/product"
    printf ' n1 , n[3-5],n[007-010] ' >"$OUT/terms" ;;
  topology_yaml)
    for f in configs/*.yaml tests/fixtures/bad/*.yaml tests/fixtures/topologies/*.yaml; do
      put "$(basename "$(dirname "$f")")-$(basename "$f")" "$f"
    done ;;
  slurm_import)  # topology.conf alone, or topology.conf \0 gres.conf
    for f in "$F"/slurm/*.conf; do put "$(basename "$f")" "$f"; done
    for f in "$F"/slurm/*.gres; do pair "gres-base+$(basename "$f")" "$F/slurm/gres-base.conf" "$f"; done
    pair plain-tree+gres "$F/slurm/plain-tree.conf" "$F/slurm/plain-gres.conf"
    pair irregular "$F/irregular/topology.conf" "$F/irregular/gres.conf"
    pair block-racks+gres "$F/slurm/block-racks.conf" "$F/slurm/block-gres.conf"
    pair bad-block-unknown-node+gres "$F/slurm/bad-block-unknown-node.conf" "$F/slurm/block-gres.conf"
    if [ -n "$NVL" ] && [ -x "$NVL" ]; then  # nvlplace's own export, annotations and all
      tmp=$(mktemp -d)
      for c in lab-h100 lab-islands dgx-h100-superpod-su gb200-nvl72-su; do
        "$NVL" export slurm "configs/$c.yaml" --out-dir "$tmp/$c" >/dev/null
        pair "export-$c" "$tmp/$c/topology.conf" "$tmp/$c/gres.conf"
      done
      pair export-gb200-nvl72-su-block "$tmp/gb200-nvl72-su/topology-block.conf" \
        "$tmp/gb200-nvl72-su/gres.conf"
      rm -rf "$tmp"
    fi ;;
  slurm_topology_yaml)  # topology.yaml, or topology.yaml \0 gres.conf [\0 names]
    for f in "$F"/slurm/*.yaml; do put "$(basename "$f")" "$f"; done
    pair topology-racks+gres "$F/slurm/topology-racks.yaml" "$F/slurm/block-gres.conf"
    { cat "$F/slurm/bad-topology-two-blocks.yaml"; printf '\0\0racks'; } >"$OUT/two-blocks+name"
    if [ -n "$NVL" ] && [ -x "$NVL" ]; then  # nvlplace's own export for Slurm 25.05+
      tmp=$(mktemp -d)
      for c in gb200-nvl72-su gb200-nvl72-2su; do
        "$NVL" export slurm "configs/$c.yaml" --slurm-release 26.05 --out-dir "$tmp/$c" >/dev/null
        pair "export-$c" "$tmp/$c/topology.yaml" "$tmp/$c/gres.conf"
      done
      rm -rf "$tmp"
    fi ;;
  nvidia_smi)
    for f in "$F"/nvidia-smi/*.txt; do put "$(basename "$f")" "$f"; done ;;
  busy_list)
    for f in "$F"/busy/*.busy; do put "$(basename "$f")" "$f"; done ;;
  trace)  # the first byte picks the format (trace_fuzz.cc): 0 auto, 1 native ... 6 philly
    for f in "$F"/traces/*; do
      b=$(basename "$f")
      case $b in
        *native*|fidelity.csv) fmt=1 ;; sacct*) fmt=2 ;; openb*) fmt=3 ;; *.swf) fmt=4 ;;
        helios*) fmt=5 ;; philly*) fmt=6 ;; *) fmt=0 ;;
      esac
      { printf '\0'; cat "$f"; } >"$OUT/auto-$b"
      { printf "\\$fmt"; cat "$f"; } >"$OUT/format$fmt-$b"
    done ;;
  policy)
    for f in configs/policies/*.yaml; do put "$(basename "$f")" "$f"; done ;;
  nvlink_health)
    for f in "$F"/health/*.yaml; do put "$(basename "$f")" "$f"; done ;;
  plugin_config|spank_options|facade|engine|held_gpus) ;;  # hand-written seeds only
  *) echo "seeds.sh: unknown target '$TARGET'" >&2; exit 2 ;;
esac
if [ -d "$ROOT/tests/fuzz/seeds/$TARGET" ]; then
  cp "$ROOT/tests/fuzz/seeds/$TARGET"/* "$OUT/"
fi
