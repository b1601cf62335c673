#!/bin/bash
# A strict job preempts as any job of its partition would. With
# PreemptType=preempt/partition_prio and every GPU held by jobs of a scavenger partition (2
# GPUs each), a TP=4 job of the gpu partition gets one whole NVLink island by preempting
# (requeueing) exactly the scavenger jobs that held that island's GPUs: no other job, and its
# TP group inside one island. nvlplace used to count only free GPUs for a hard constraint, so
# such a job waited for as long as the scavenger jobs ran (this test failed so: Reason=
# Resources). Not told apart here: offered only the jobs that hold the node set's GPUs,
# cons_tres preempts those; offered every preemptable job, it preempts any on those nodes
# until enough GPUs are free there, whichever island they are in (on this pattern its order
# happens to free one island too).
source "$(dirname "$0")/lib.sh"

use_cluster nvlplace backfill --preempt
reset_jobs
gpus_total=$(sinfo -h -N -p gpu -o '%G' | awk -F: '/gpu:/ { n += $NF + 0 } END { print n + 0 }')
((gpus_total > 0 && gpus_total % 2 == 0)) || fail "cannot count the cluster's GPUs ($gpus_total)"
scavengers=()
for ((k = 0; k < gpus_total / 2; k++)); do scavengers+=("$(submit -p scavenger --gpus=2)"); done
running_count() { squeue -h -p scavenger -t R -o %A | wc -l; }
all_running() { (($(running_count) == ${#scavengers[@]})); }
nvl_wait_for 120 "${#scavengers[@]} scavenger jobs to run" all_running ||
  fail "only $(running_count) of ${#scavengers[@]} scavenger jobs run"
declare -A held
for j in "${scavengers[@]}"; do
  held[$j]=$(nvl_job_gpus "$j")
  gpus_in_one_island "${held[$j]}" || fail "scavenger job $j straddles islands (${held[$j]}): pattern broken"
done
note "every GPU held: ${#scavengers[@]} scavenger jobs of 2 GPUs"

mark=$(log_mark)
tp=$(submit --gpus=4 --nvl-tp=4)
wait_state "$tp" RUNNING 120
mine=$(nvl_job_gpus "$tp")
note "TP=4 job $tp runs on $mine"
gpus_in_one_island "$mine" || fail "the TP=4 strict job split over islands: $mine"
comment_has "$tp" event=placed tp=4 nvl=strict span_domains=1 ||
  fail "SystemComment of $tp: $(job_comment "$tp")"
log_line_has "$mark" "$tp" event=waiting "why~Slurm preempts 2 running jobs on" ||
  fail "no line of $tp saying what Slurm preempts for it"
mine_list=$(nvl_job_gpu_list "$tp")
preempted=() expected=()
for j in "${scavengers[@]}"; do
  is_state "$j" RUNNING || preempted+=("$j")
  # shellcheck disable=SC2086
  theirs=$("$NVL_CLI" check gpus ${held[$j]} | sort)
  [[ -z $(comm -12 <(echo "$mine_list") <(echo "$theirs")) ]] || expected+=("$j")
done
note "preempted: ${preempted[*]}; held the TP job's GPUs: ${expected[*]}"
((${#expected[@]} == 2)) || fail "the TP job's 4 GPUs were held by ${#expected[@]} scavenger jobs, not 2"
[[ ${preempted[*]} == "${expected[*]}" ]] ||
  fail "preempted ${preempted[*]:-none}, but only ${expected[*]} held the TP job's GPUs"
reset_jobs
note "ok"
