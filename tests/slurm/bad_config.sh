#!/bin/bash
# A bad nvlplace.yaml never turns placement off: one clear error with file:line, and the last
# good configuration stays in force (in memory, or from the copy kept in StateSaveLocation
# when the reconfigure is a new process, 23.11+), shown by `nvlplace status`. With no good
# configuration at all (none ever loaded, no copy) a job with nvlplace options waits with the
# reason, and plain jobs go to cons_tres. A topology lacking Slurm's nodes is named in one
# error; a good file read on `scontrol reconfigure` brings everything back.
source "$(dirname "$0")/lib.sh"
use_cluster nvlplace
reset_jobs
ctld=$(nvl_pid_of "$NVL_RUN/run/slurmctld.pid")
yaml=$NVL_RUN/etc/nvlplace.yaml
state=$NVL_RUN/state/nvlplace
# From 23.11 `scontrol reconfigure` starts a new slurmctld process on purpose (the old one
# hands over and exits), so the pid changes there; before, the same process must go on.
same_ctld() {
  nvl_reconfigure_restarts "$(nvl_slurm_release)" ||
    [[ $(nvl_pid_of "$NVL_RUN/run/slurmctld.pid") == "$ctld" ]]
}
status() { "$NVL_CLI" status --state-dir "$NVL_RUN/state"; }
# status_has PATTERN: `nvlplace status` prints it (whatever its exit code).
status_has() {
  local out
  out=$(status) || true
  grep -q -- "$1" <<<"$out"
}

[[ -f $state/last-good/nvlplace.yaml ]] || fail "no last good copy in $state after a good load"
out=$(status) || fail "nvlplace status says the last load failed: $out"
status_has "in force:   the configuration in $yaml" || fail "status: $out"

# The split pattern first, placed by nvlplace (stock cons_tres orders GPUs differently from
# 24.05 on, so the holders are not left to it): node00 has GPUs 2-3 and 6-7 free.
holders=$(make_split_pattern)

mark=$(log_mark)
write_nvlplace_yaml "topology: $NVL_TOPOLOGY
log_level: chatty"
nvl_wait_for 20 "the configuration error in the log" log_has "$mark" "error: nvlplace: " ||
  fail "no error logged for a bad nvlplace.yaml"
one_error_since "$mark" "error: nvlplace: $yaml:2:12: #/log_level: log level 'chatty' is not one of error, info, debug; the .* \(is\|stays\) in force until this is fixed"
nvl_ctld_up || fail "slurmctld stopped answering"
same_ctld || fail "slurmctld restarted"
# The admin sees it without the log.
nvl_wait_for 20 "the status to name the error" status_has "FAILED.*nvlplace.yaml:2:12" ||
  fail "nvlplace status does not show the error: $(status)"
status >/dev/null && fail "nvlplace status exits 0 while the last load failed"

# The last good configuration decides: a strict TP=4 job held to node00 waits (its free
# GPUs are 2 + 2 over two islands) instead of running split.
job=$(submit -w node00 --gpus=4 --nvl-tp=4 --nvl=strict)
nvl_wait_for 30 "job $job to wait" comment_has "$job" event=waiting ||
  fail "job $job: $(scontrol show job "$job" | grep -E 'JobState|SystemComment')"
[[ $(job_state "$job") == PENDING ]] || fail "job $job is $(job_state "$job") under the last good configuration"
scancel "$job"

# No good configuration at all: the file missing and the copy gone, slurmctld restarted.
rm -f "$yaml"
rm -rf "$state/last-good"
mark=$(log_mark)
nvl_stop_slurmctld
nvl_start_slurmctld || fail "slurmctld did not come back"
nvl_wait_for 60 "nodes to be up after the restart" nvl_all_nodes_up || fail "nodes not up"
nvl_wait_for 20 "the missing-file error" log_has "$mark" "error: nvlplace: .*$yaml.*no usable configuration" ||
  fail "no error for a missing nvlplace.yaml: $(log_since "$mark" | grep 'nvlplace')"
status_has "in force:   nothing" || fail "status: $(status)"
# A plain job is cons_tres's: on node00 it runs on the 4 free GPUs, split 2 + 2 over the
# two islands. It is held to node00 (-w): until node00 registers again with the new
# slurmctld cons_tres does not choose it. A job with nvlplace options (free to go anywhere,
# every other node idle) waits and says why.
plain=$(submit -w node00 --gpus=4)
wait_state "$plain" RUNNING
got=$(nvl_job_gpus "$plain" | paste -sd' ')
[[ $got == node00:2-3,6-7 ]] || fail "without a configuration the plain job got $got, not cons_tres's node00:2-3,6-7"
strict=$(submit --gpus=4 --nvl-tp=4 --nvl=strict)
nvl_wait_for 30 "job $strict to wait" comment_has "$strict" event=waiting "why~no usable nvlplace configuration" ||
  fail "job $strict: $(scontrol show job "$strict" | grep -E 'JobState|SystemComment')"
[[ $(job_state "$strict") == PENDING ]] || fail "strict job $strict is $(job_state "$strict") without a configuration"
scancel "$plain" "$strict"
ctld=$(nvl_pid_of "$NVL_RUN/run/slurmctld.pid")

# A topology that does not describe Slurm's nodes (lab-h100 has node[0-7], this cluster
# node[00-15]): loaded, with one error naming the nodes it lacks.
mark=$(log_mark)
write_nvlplace_yaml "topology: $NVL_ROOT/configs/lab-h100.yaml"
nvl_wait_for 20 "the unknown-nodes error" log_has "$mark" "nvlplace: loaded $yaml" ||
  fail "lab-h100 topology not loaded"
log_has "$mark" "error: nvlplace: $yaml: 16 of 16 Slurm nodes are not in its topology: node\[00-15\]; nvlplace places no job there" ||
  fail "no error for Slurm nodes missing from the topology: $(log_since "$mark" | grep nvlplace)"
nvl_ctld_up || fail "slurmctld stopped answering"

mark=$(log_mark)
good_nvlplace_yaml
nvl_wait_for 20 "the configuration to load" log_has "$mark" "nvlplace: loaded $yaml" ||
  fail "good nvlplace.yaml not loaded"
log_has "$mark" "Slurm nodes are not in its topology" && fail "the good topology reported missing nodes"
out=$(status) || fail "nvlplace status after the fix: $out"
job2=$(submit --gpus=4 --nvl-tp=4)
wait_state "$job2" RUNNING
got=$(nvl_job_gpus "$job2" | paste -sd' ')
gpus_in_one_island "$got" || fail "after the fix the job still split: $got"
same_ctld || fail "slurmctld restarted"
reset_jobs
note "ok"
