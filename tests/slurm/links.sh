#!/bin/bash
# The gres.conf Links= that `nvlplace export slurm` writes steers stock select/cons_tres
# toward NVLink islands: on servers whose islands interleave ({0,2,4,6}, {1,3,5,7}), with
# GPU 0 busy, a 4-GPU job gets the free island 1,3,5,7 with the exported file, and 1-4 (two
# islands) from the same file without its Links=. (With islands of consecutive indexes the
# lowest-index-first choice hides the effect; there the select plugin steers, see
# tp_island.sh.)
source "$(dirname "$0")/lib.sh"
NVL_TOPOLOGY=$NVL_ROOT/tests/fixtures/topologies/interleaved-islands.yaml
files=$(mktemp -d)
trap 'rm -rf "$files"' EXIT

four_gpus_after_gpu0() {  # prints the GPUs of a 4-GPU job on node0 once GPU 0 is taken
  use_cluster cons_tres
  reset_jobs
  local h j
  h=$(submit -w node0 --gres=gpu:1)
  wait_state "$h" RUNNING
  [[ $(nvl_job_gpus "$h") == node0:0 ]] || fail "the holder got $(nvl_job_gpus "$h"), not GPU 0"
  j=$(submit -w node0 --gres=gpu:4)
  wait_state "$j" RUNNING
  nvl_job_gpus "$j"
  reset_jobs
}

with=$(four_gpus_after_gpu0) || exit 1
"$NVL_CLI" export slurm "$NVL_TOPOLOGY" --out-dir "$files" >/dev/null || fail "export failed"
grep -q 'Links=' "$files/gres.conf" || fail "the export wrote no Links="
sed -i 's/ Links=[^ ]*//' "$files/gres.conf"
without=$(NVLPLACE_SLURM_FILES=$files four_gpus_after_gpu0) || exit 1
note "stock cons_tres, GPU 0 busy, 4 GPUs: with Links= $with; without $without"
[[ $with == node0:1,3,5,7 ]] || fail "with the exported Links= cons_tres chose $with, not the island 1,3,5,7"
[[ $without == node0:1-4 ]] || fail "without Links= cons_tres chose $without (expected 1-4): the comparison shows nothing"
note "ok"
