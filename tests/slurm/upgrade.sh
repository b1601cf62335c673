#!/bin/bash
# An upgrade with nvlplace jobs running and waiting (issue 26, point 4): a cluster of the old
# release (NVLPLACE_UPGRADE_FROM_PREFIX, its plugin build NVLPLACE_UPGRADE_FROM_PLUGIN_LIB)
# runs jobs and holds a strict one that would only fit split; slurmctld and every slurmd are
# stopped with the jobs left running (as an admin upgrades), and the new release's daemons
# (NVLPLACE_SLURM_PREFIX, NVLPLACE_PLUGIN_LIB) start on the same state with the new build of
# the plugin. Every running job keeps its GPUs, the strict job still waits rather than run
# split, and starts as decided once room is made. The cluster is this test's own (its
# NVLPLACE_CLUSTER_DIR), removed at the end.
source "$(dirname "$0")/lib.sh"
require_cluster_tools
[[ -n ${NVLPLACE_UPGRADE_FROM_PREFIX:-} && -n ${NVLPLACE_UPGRADE_FROM_PLUGIN_LIB:-} ]] ||
  skip "no release to upgrade from (NVLPLACE_UPGRADE_FROM_PREFIX)"
state=$NVL_TEST_OUT/upgrade.jobs

if [[ ${1:-} == --old ]]; then
  # The old release's half, in its own environment (its commands on PATH).
  use_cluster nvlplace
  reset_jobs
  read -r a c <<<"$(make_split_pattern)"  # node00: 2-3 and 6-7 free, one island each
  big=$(submit -N14 --gpus-per-node=8 --nvl-tp=4)
  wait_state "$big" RUNNING
  last=$(submit --gpus=8 --nvl-tp=4)
  wait_state "$last" RUNNING
  strict=$(submit --gpus=4 --nvl-tp=4)
  nvl_wait_for 30 "job $strict to wait" comment_has "$strict" event=waiting ||
    fail "job $strict: $(job_state "$strict") $(job_comment "$strict")"
  mkdir -p "$NVL_TEST_OUT"
  for j in "$a" "$c" "$big" "$last"; do
    echo "$j $(nvl_job_gpus "$j" | paste -sd' ')"
  done >"$state"
  echo "strict $strict" >>"$state"
  echo "release $(nvl_slurm_release)" >>"$state"
  # Stop the daemons, not the jobs: their slurmstepd go on.
  nvl_stop_slurmctld
  mapfile -t pids < <(nvl_slurmd_pids)
  nvl_stop_pids slurmd "${pids[@]}"
  rm -f "$NVL_RUN"/run/slurmd-*.pid
  [[ -n $(nvl_stray_stepds) ]] || fail "no job step survived the stop of the old daemons"
  exit 0
fi

trap '"$NVL_ROOT/contrib/cluster/clean.sh" >/dev/null 2>&1' EXIT
rm -f "$state"
NVLPLACE_SLURM_PREFIX=$NVLPLACE_UPGRADE_FROM_PREFIX \
  NVLPLACE_PLUGIN_LIB=$NVLPLACE_UPGRADE_FROM_PLUGIN_LIB bash "$0" --old ||
  fail "the old release's half failed"
old=$(sed -n 's/^release //p' "$state")
strict=$(sed -n 's/^strict //p' "$state")

mark=$(log_mark)
"$NVL_ROOT/contrib/cluster/start.sh" --topology "$NVL_TOPOLOGY" --select nvlplace --keep-state \
  >/dev/null || fail "the new daemons did not start on the old state (see $NVL_RUN/log)"
new=$(nvl_slurm_release)
[[ $(scontrol version) == "slurm $new" ]] || fail "scontrol is $(scontrol version), not $new"
note "upgraded $old -> $new with jobs running"

# Every running job keeps its GPUs.
while read -r job gpus; do
  [[ $job =~ ^[0-9]+$ ]] || continue
  is_state "$job" RUNNING || fail "job $job is $(job_state "$job") after the upgrade"
  got=$(nvl_job_gpus "$job" | paste -sd' ')
  [[ $got == "$gpus" ]] || fail "job $job held $gpus before the upgrade and $got after"
done <"$state"
# The strict job is still strict: the new plugin decides it again and it waits, though
# node00's two free pairs would hold it split.
nvl_wait_for 30 "the new plugin to decide job $strict" \
  log_line_has "$mark" "$strict" event=waiting || fail "job $strict: $(job_comment "$strict")"
is_state "$strict" PENDING || fail "job $strict ran split after the upgrade: $(nvl_job_gpus "$strict")"
# Room inside one island: the job that took a whole node ends, and the strict one starts
# there, as decided.
last=$(awk 'NR == 4 { print $1 }' "$state")
scancel "$last"
wait_state "$strict" RUNNING 60
comment_has "$strict" event=placed || fail "job $strict: $(job_comment "$strict")"
gpus_in_one_island "$(nvl_job_gpus "$strict")" ||
  fail "job $strict runs split: $(nvl_job_gpus "$strict")"
note "job $strict started after the upgrade on $(nvl_job_gpus "$strict")"
# The old release's job steps end under the new slurmd.
reset_jobs
note "ok"
