#!/bin/bash
# A bad or missing nvlplace.yaml: one clear error with file:line, slurmctld keeps running
# and places exactly as cons_tres; a topology lacking Slurm's nodes is named in one error;
# a good file read on `scontrol reconfigure` brings the topology-aware placement back.
source "$(dirname "$0")/lib.sh"
use_cluster nvlplace
reset_jobs
ctld=$(nvl_pid_of "$NVL_RUN/run/slurmctld.pid")
yaml=$NVL_RUN/etc/nvlplace.yaml
# From 23.11 `scontrol reconfigure` starts a new slurmctld process on purpose (the old one
# hands over and exits), so the pid changes there; before, the same process must go on.
same_ctld() {
  nvl_reconfigure_restarts "$(nvl_slurm_release)" ||
    [[ $(nvl_pid_of "$NVL_RUN/run/slurmctld.pid") == "$ctld" ]]
}

# The split pattern first, placed by nvlplace (stock cons_tres orders GPUs differently from
# 24.05 on, so the holders are not left to it).
holders=$(make_split_pattern)

mark=$(log_mark)
write_nvlplace_yaml "topology: $NVL_TOPOLOGY
log_level: chatty"
nvl_wait_for 20 "the configuration error in the log" log_has "$mark" "error: nvlplace: " ||
  fail "no error logged for a bad nvlplace.yaml"
errors=$(log_since "$mark" | grep -c "error: nvlplace: ")
[[ $errors -eq 1 ]] || fail "$errors error lines for one bad file"
log_has "$mark" "error: nvlplace: $yaml:2:12: #/log_level: log level 'chatty' is not one of error, info, debug; placing exactly as select/cons_tres" ||
  fail "error line lacks file:line: $(log_since "$mark" | grep 'error: nvlplace')"
nvl_ctld_up || fail "slurmctld stopped answering"
same_ctld || fail "slurmctld restarted"

# cons_tres behaviour: on node00 the job runs on the 4 free GPUs, split 2 + 2 over the two
# islands, which nvlplace never allows. The job is held to node00 (-w): from 23.11 the
# reconfigure above started a new slurmctld, and until node00 registers again with it
# cons_tres does not choose node00, so a job free to go anywhere would land wherever the
# first node to register is (a CI run got node09:0-3 one second after the restart).
job=$(submit -w node00 --gpus=4 --nvl-tp=4)
wait_state "$job" RUNNING
got=$(nvl_job_gpus "$job" | paste -sd' ')
[[ $got == node00:2-3,6-7 ]] || fail "with a bad nvlplace.yaml the job got $got, not cons_tres's node00:2-3,6-7"
[[ $(log_since "$mark" | nvl_placement_log --log - --count --job "$job") == 0 ]] ||
  fail "nvlplace placed job $job without a configuration"

mark=$(log_mark)
rm -f "$yaml"
scontrol reconfigure || fail "reconfigure"
nvl_wait_for 20 "the missing-file error" log_has "$mark" "error: nvlplace: .*$yaml" ||
  fail "no error for a missing nvlplace.yaml"
nvl_ctld_up || fail "slurmctld stopped answering"

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
job2=$(submit --gpus=4 --nvl-tp=4)
wait_state "$job2" RUNNING
got=$(nvl_job_gpus "$job2" | paste -sd' ')
gpus_in_one_island "$got" || fail "after the fix the job still split: $got"
same_ctld || fail "slurmctld restarted"
reset_jobs
note "ok"
