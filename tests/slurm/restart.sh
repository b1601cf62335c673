#!/bin/bash
# slurmctld restarts with running jobs: every job keeps its nodes and GPUs, the plugin's
# view of busy GPUs comes back from Slurm's job records, and nothing is allocated twice.
source "$(dirname "$0")/lib.sh"
use_cluster nvlplace
reset_jobs

h=$(submit -w node05 --gres=gpu:1)
wait_state "$h" RUNNING
steered=$(submit -w node05 --gpus=4 --nvl-tp=4)
jobs=("$h" "$steered")
for i in 1 2 3; do jobs+=("$(submit --gpus=4 --nvl-tp=4)"); done
jobs+=("$(submit -N2 --gpus-per-node=8)")
for j in "${jobs[@]}"; do wait_state "$j" RUNNING; done
declare -A before
for j in "${jobs[@]}"; do before[$j]=$(nvl_job_gpus "$j" | paste -sd' '); done
[[ ${before[$steered]} == node05:4-7 ]] || fail "job $steered got ${before[$steered]}, not node05:4-7"

mark=$(log_mark)
nvl_stop_slurmctld
nvl_start_slurmctld || fail "slurmctld did not come back"
nvl_wait_for 60 "nodes to be up after the restart" nvl_all_nodes_up || fail "nodes not up"
log_has "$mark" "nvlplace: loaded" || fail "configuration not loaded after the restart"

for j in "${jobs[@]}"; do
  [[ $(job_state "$j") == RUNNING ]] || fail "job $j is $(job_state "$j") after the restart"
  now=$(nvl_job_gpus "$j" | paste -sd' ')
  [[ $now == "${before[$j]}" ]] || fail "job $j moved: ${before[$j]} -> $now"
done

# node05 has GPUs 1-3 free: a TP=4 group cannot fit there, 3 GPUs can, nothing else.
waiting=$(submit -w node05 --gpus=4 --nvl-tp=4)
nvl_wait_for 30 "job $waiting to wait" comment_has "$waiting" event=waiting ||
  fail "job $waiting: $(scontrol show job "$waiting" | grep -E 'JobState|SystemComment')"
three=$(submit -w node05 --gpus=3)
wait_state "$three" RUNNING
[[ $(nvl_job_gpus "$three") == node05:1-3 ]] || fail "job $three got $(nvl_job_gpus "$three"), not node05:1-3"

# No GPU is held by two running jobs.
all=$(for j in $(squeue -h -t R -o %A); do nvl_job_gpu_list "$j"; done)
dups=$(sort <<<"$all" | uniq -d)
[[ -z $dups ]] || fail "GPUs allocated twice after the restart: $dups"
note "$(wc -l <<<"$all") GPUs busy, none twice"
reset_jobs
note "ok"
