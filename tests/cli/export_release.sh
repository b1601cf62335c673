#!/bin/sh
# `nvlplace export slurm` for a Slurm release and into a folder that already has files:
# --slurm-release 24.05 or later writes no Links= (and says why in gres.conf); an existing
# topology.conf or gres.conf with other content is refused (exit 2, naming it, nothing
# written) unless --force; the same content again is fine; a malformed release is exit 2.
# Usage: export_release.sh NVLPLACE_BINARY
set -u
BIN=$1
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 1
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
CONFIG=configs/lab-islands.yaml

"$BIN" export slurm $CONFIG --slurm-release 24.11 --out-dir "$TMP/a" >"$TMP/out" 2>&1 ||
  fail "export --slurm-release 24.11: $(cat "$TMP/out")"
grep -q 'Links=' "$TMP/a/gres.conf" && fail "--slurm-release 24.11 wrote Links="
grep -q '^# Without Links rows: from Slurm 24.05' "$TMP/a/gres.conf" || fail "no note on the missing Links="
grep -q 'no Links=' "$TMP/out" || fail "the command did not say it left Links= out: $(cat "$TMP/out")"
"$BIN" export slurm $CONFIG --slurm-release 22.05 --out-dir "$TMP/b" >/dev/null 2>&1 || fail "22.05"
grep -q 'Links=-1,1,1,1,0,0,0,0' "$TMP/b/gres.conf" || fail "--slurm-release 22.05 wrote no Links="
"$BIN" export slurm $CONFIG --out-dir "$TMP/c" >/dev/null 2>&1 || fail "no --slurm-release"
cmp -s "$TMP/b/gres.conf" "$TMP/c/gres.conf" || fail "without --slurm-release the export is not 22.05's"

# A site's own gres.conf in the folder: refused, untouched.
printf 'AutoDetect=nvml\nName=mps Count=100\n' >"$TMP/a/gres.conf"
"$BIN" export slurm $CONFIG --out-dir "$TMP/a" >"$TMP/out" 2>&1
rc=$?
[ $rc -eq 2 ] || fail "overwrite without --force: exit $rc, not 2: $(cat "$TMP/out")"
grep -q "$TMP/a/gres.conf exists with other content" "$TMP/out" || fail "message: $(cat "$TMP/out")"
grep -q 'give --force' "$TMP/out" || fail "the message does not say what to do: $(cat "$TMP/out")"
grep -q '^AutoDetect=nvml' "$TMP/a/gres.conf" || fail "the site's gres.conf was changed"
# The same content again: written (a rerun of the same export is not an error).
"$BIN" export slurm $CONFIG --slurm-release 24.11 --out-dir "$TMP/b" >"$TMP/out" 2>&1
rc=$?
[ $rc -eq 2 ] || fail "other content (Links=) in b without --force: exit $rc"
"$BIN" export slurm $CONFIG --slurm-release 22.05 --out-dir "$TMP/b" >/dev/null 2>&1 ||
  fail "the same content again was refused"
"$BIN" export slurm $CONFIG --out-dir "$TMP/a" --force >/dev/null 2>&1 || fail "--force refused"
cmp -s "$TMP/a/gres.conf" "$TMP/c/gres.conf" || fail "--force did not replace gres.conf"

# NVL72 racks (issue 25): topology/block's file for each release, and none without racks.
NVL=configs/gb200-nvl72-su.yaml
"$BIN" export slurm $NVL --slurm-release 24.11 --out-dir "$TMP/n24" >"$TMP/out" 2>&1 || fail "24.11: $(cat "$TMP/out")"
[ -f "$TMP/n24/topology-block.conf" ] && [ ! -e "$TMP/n24/topology.yaml" ] || fail "24.11 files: $(ls "$TMP/n24")"
grep -q '^BlockSizes=16,32,64,128$' "$TMP/n24/topology-block.conf" || fail "24.11 BlockSizes"
grep -q 'topology-block.conf is topology.conf for TopologyPlugin=topology/block' "$TMP/out" ||
  fail "24.11 does not say how to use topology-block.conf: $(cat "$TMP/out")"
# 23.11 knows BlockLevels= only (BlockSizes= stops its slurmctld); 22.05 has no topology/block.
"$BIN" export slurm $NVL --slurm-release 23.11 --out-dir "$TMP/n23" >"$TMP/out" 2>&1 || fail "23.11: $(cat "$TMP/out")"
grep -q '^BlockLevels=0-3$' "$TMP/n23/topology-block.conf" && ! grep -q '^BlockSizes' "$TMP/n23/topology-block.conf" ||
  fail "23.11 block file: $(grep -v '^#' "$TMP/n23/topology-block.conf" | tail -2)"
"$BIN" export slurm $NVL --slurm-release 22.05 --out-dir "$TMP/n22" >"$TMP/out" 2>&1 || fail "22.05: $(cat "$TMP/out")"
[ ! -e "$TMP/n22/topology-block.conf" ] || fail "22.05 got a topology-block.conf"
grep -q 'has no topology/block' "$TMP/out" || fail "22.05 does not say why no block file: $(cat "$TMP/out")"
"$BIN" export slurm $NVL --slurm-release 25.05 --out-dir "$TMP/n25" >"$TMP/out" 2>&1 || fail "25.05: $(cat "$TMP/out")"
[ -f "$TMP/n25/topology.yaml" ] && [ ! -e "$TMP/n25/topology-block.conf" ] || fail "25.05 files: $(ls "$TMP/n25")"
grep -q 'Topology=nvlink' "$TMP/out" || fail "25.05 does not name the partition lines: $(cat "$TMP/out")"
cmp -s "$TMP/n24/topology.conf" "$TMP/n25/topology.conf" || fail "topology.conf differs by release"
# An existing topology.yaml of the site's is refused like any other file.
printf -- '- topology: mine\n  flat: true\n' >"$TMP/n25/topology.yaml"
"$BIN" export slurm $NVL --slurm-release 25.05 --out-dir "$TMP/n25" >"$TMP/out" 2>&1
[ $? -eq 2 ] && grep -q "topology.yaml exists with other content" "$TMP/out" || fail "topology.yaml overwritten: $(cat "$TMP/out")"
grep -q 'topology: mine' "$TMP/n25/topology.yaml" || fail "the site's topology.yaml was changed"
"$BIN" export slurm $CONFIG --slurm-release 26.05 --out-dir "$TMP/e" >/dev/null 2>&1 || fail "26.05 lab"
[ "$(ls "$TMP/e" | tr '\n' ' ')" = "gres.conf topology.conf " ] || fail "no racks, yet: $(ls "$TMP/e")"

for bad in 24 24.x 24.11.7.1 " 24.11" 24.11a 9999.1 24..1; do
  "$BIN" export slurm $CONFIG --slurm-release "$bad" --out-dir "$TMP/d" >"$TMP/out" 2>&1
  rc=$?
  [ $rc -eq 2 ] || fail "--slurm-release '$bad': exit $rc, not 2"
  grep -q 'give the Slurm release as MAJOR.MINOR' "$TMP/out" || fail "'$bad': $(cat "$TMP/out")"
done
[ ! -e "$TMP/d" ] || fail "a refused export created its folder"
echo ok
