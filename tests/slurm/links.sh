#!/bin/bash
# gres.conf Links= and stock select/cons_tres, per Slurm release.
# Before 24.05 the Links= that `nvlplace export slurm` writes steers stock cons_tres toward
# NVLink islands: on servers whose islands interleave ({0,2,4,6}, {1,3,5,7}), with GPU 0
# busy, a 4-GPU job gets the free island 1,3,5,7 with the exported file, and 1-4 (two
# islands) without its Links=. (With islands of consecutive indexes the lowest-index-first
# choice hides the effect; there the select plugin steers, see tp_island.sh.)
# From 24.05 cons_tres takes the least-linked GPU first: on an empty node with islands
# {0-3},{4-7} and Links=, a 4-GPU job is split over both islands. So `export slurm
# --slurm-release` of such a release writes no Links= (cons_tres then takes 0-3), and the
# plugin places a TP=4 job inside one island either way.
source "$(dirname "$0")/lib.sh"
files=$(mktemp -d)
trap 'rm -rf "$files"' EXIT

# stock_gpus NODE HOLD GPUS: the GPUs of a GPUS-GPU job on NODE under stock cons_tres once a
# HOLD-GPU job (0: none) holds the first GPU(s).
stock_gpus() {
  use_cluster cons_tres
  reset_jobs
  local h j
  if (($2 > 0)); then
    h=$(submit -w "$1" --gres=gpu:"$2")
    wait_state "$h" RUNNING
    [[ $(nvl_job_gpus "$h") == "$1:0" ]] || fail "the holder got $(nvl_job_gpus "$h"), not GPU 0"
  fi
  j=$(submit -w "$1" --gres=gpu:"$3")
  wait_state "$j" RUNNING
  nvl_job_gpus "$j"
  reset_jobs
}

release=$(nvl_slurm_release)
note "Slurm $release"
if nvl_links_help "$release"; then
  NVL_TOPOLOGY=$NVL_ROOT/tests/fixtures/topologies/interleaved-islands.yaml
  with=$(stock_gpus node0 1 4) || exit 1
  "$NVL_CLI" export slurm "$NVL_TOPOLOGY" --out-dir "$files" >/dev/null || fail "export failed"
  grep -q 'Links=' "$files/gres.conf" || fail "the export wrote no Links="
  sed -i 's/ Links=[^ ]*//' "$files/gres.conf"
  without=$(NVLPLACE_SLURM_FILES=$files stock_gpus node0 1 4) || exit 1
  note "stock cons_tres, GPU 0 busy, 4 GPUs: with Links= $with; without $without"
  [[ $with == node0:1,3,5,7 ]] || fail "with the exported Links= cons_tres chose $with, not the island 1,3,5,7"
  [[ $without == node0:1-4 ]] || fail "without Links= cons_tres chose $without (expected 1-4): the comparison shows nothing"
else
  # The cluster's own files were exported for this release: no Links=.
  "$NVL_CLI" export slurm "$NVL_TOPOLOGY" --out-dir "$files/links" >/dev/null || fail "export failed"
  grep -q 'Links=' "$files/links/gres.conf" || fail "the export without --slurm-release wrote no Links="
  "$NVL_CLI" export slurm "$NVL_TOPOLOGY" --slurm-release "$release" --out-dir "$files/release" \
    >/dev/null || fail "export --slurm-release $release failed"
  ! grep -q 'Links=' "$files/release/gres.conf" || fail "export --slurm-release $release wrote Links="
  with=$(NVLPLACE_SLURM_FILES=$files/links stock_gpus node00 0 4) || exit 1
  without=$(NVLPLACE_SLURM_FILES=$files/release stock_gpus node00 0 4) || exit 1
  note "stock cons_tres, empty node, islands {0-3},{4-7}, 4 GPUs: with Links= $with; as exported for $release (no Links=) $without"
  gpus_in_one_island "$with" && fail "with Links= Slurm $release kept $with in one island: the least-linked-first choice is gone, revisit the export"
  gpus_in_one_island "$without" || fail "without Links= cons_tres split $without"
  NVLPLACE_SLURM_FILES=$files/links use_cluster nvlplace
  reset_jobs
  j=$(submit -w node00 --gpus=4 --nvl-tp=4)
  wait_state "$j" RUNNING
  got=$(nvl_job_gpus "$j")
  note "select/cons_tres_nvlplace, same node, files with Links=, --gpus=4 --nvl-tp=4: $got"
  gpus_in_one_island "$got" || fail "the plugin split the TP=4 group: $got"
  reset_jobs
fi
note "ok"
