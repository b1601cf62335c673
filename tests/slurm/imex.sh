#!/bin/bash
# A placement is promised only once Slurm starts the job. slurmctld's select_nodes still
# checks after job_test (IMEX channels, accounting limits, burst buffers, MPI ports) and
# may keep the job pending; the plugin used to say event=placed in the job's SystemComment
# and log the moment job_test accepted the node set, so a job that never started there
# claimed GPUs it did not have. With switch/nvidia_imex and 2 IMEX channels (Slurm 25.11+;
# slurmctld hands out the channels, the slurmd here have no IMEX device), a third TP job
# waits with Reason=NvidiaImexChannels: its comment says it waits and why, no placement
# line is logged for it, and once a channel is free it runs where its comment then says,
# checked against `scontrol show job -d`.
source "$(dirname "$0")/lib.sh"
require_cluster_tools
nvl_release_at_least "$(nvl_slurm_release)" 25 11 ||
  skip "switch/nvidia_imex needs Slurm 25.11 or later; this is $(nvl_slurm_release)"
use_cluster nvlplace backfill --imex 2
reset_jobs

reason_of() { scontrol show job "$1" | sed -n 's/.* Reason=\([^ ]*\).*/\1/p'; }
has_reason() { [[ $(reason_of "$1") == "$2" ]]; }
says_why() {
  comment_has "$1" event=waiting tp=4 nvl=strict \
    "why~Slurm kept the job pending after accepting this placement (Reason=NvidiaImexChannels)"
}

a=$(submit --gpus=4 --nvl-tp=4)
b=$(submit --gpus=4 --nvl-tp=4)
wait_state "$a" RUNNING
wait_state "$b" RUNNING
mark=$(log_mark)
c=$(submit --gpus=4 --nvl-tp=4)
nvl_wait_for 30 "job $c to wait for an IMEX channel" has_reason "$c" NvidiaImexChannels ||
  fail "job $c is $(job_state "$c") with Reason=$(reason_of "$c"), not waiting for an IMEX channel"
nvl_wait_for 30 "job $c's comment to say why it waits" says_why "$c" ||
  fail "job $c waits for an IMEX channel; its SystemComment says: $(job_comment "$c")"
is_state "$c" PENDING || fail "job $c is $(job_state "$c"), not PENDING"
log_line_has "$mark" "$c" event=waiting "why~(Reason=NvidiaImexChannels)" ||
  fail "no line in slurmctld's log saying job $c waits for an IMEX channel"
! log_line_has "$mark" "$c" event=placed ||
  fail "a placement line for job $c, which Slurm did not start: $(log_since "$mark" | grep "JobId=$c ")"
note "job $c waits for an IMEX channel and says so: $(job_comment "$c")"

# A channel comes free: the job starts, and its comment names the GPUs Slurm allocated.
scancel "$a"
wait_state "$c" RUNNING 60
placed_in_one_island "$c" 4
log_line_has "$mark" "$c" event=placed "gpus=$mine" ||
  fail "no placement line for job $c on $mine"
note "job $c runs on $mine, as its comment says"

# A job array: each task that starts gets a job id of its own in select_nodes (the array's
# pending record keeps the old one); its comment is its own placement, and the task left
# waiting for a channel says so.
reset_jobs
arr=$(sbatch --parsable -o /dev/null --array=0-2 --gpus=4 --nvl-tp=4 --wrap 'sleep 3600') ||
  fail "sbatch --array refused"
arr=${arr%%;*}
running_tasks() { squeue -h -r -j "$arr" -t R -o %A; }
two_run() { (($(running_tasks | wc -l) == 2)); }
nvl_wait_for 60 "two tasks of array $arr to run" two_run ||
  fail "$(running_tasks | wc -l) tasks of array $arr run, not 2 (IMEX channels: 2)"
for t in $(running_tasks); do
  mine=$(nvl_job_gpus "$t")
  comment_has "$t" event=placed tp=4 "gpus=$mine" "slurm_gpus=$mine" ||
    fail "array task $t runs on $mine; its SystemComment says: $(job_comment "$t")"
done
pend=$(squeue -h -r -j "$arr" -t PD -o %i) # ARRAY_TASK: the array's pending record
[[ $pend == "${arr}_"[0-9] ]] || fail "array $arr's pending tasks: '$pend', not one"
nvl_wait_for 30 "task $pend to wait for an IMEX channel" has_reason "$pend" NvidiaImexChannels ||
  fail "task $pend has Reason=$(reason_of "$pend")"
nvl_wait_for 30 "task $pend's comment to say why it waits" says_why "$pend" ||
  fail "task $pend's SystemComment says: $(job_comment "$pend")"
note "array $arr: tasks $(running_tasks | tr '\n' ' ')run as their comments say; the third waits and says why"
reset_jobs
