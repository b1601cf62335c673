#!/bin/bash
# A strict job preempts as any job of its partition would. With
# PreemptType=preempt/partition_prio and every GPU held by jobs of a scavenger partition (2
# GPUs each), a TP=4 job of the gpu partition gets one whole NVLink island by preempting
# (requeueing) exactly the scavenger jobs that held that island's GPUs: no other job, and its
# TP group inside one island; on a node whose cores are full too, also the CPU-only job whose
# cores it needs. nvlplace used to count only free GPUs for a hard constraint, so
# such a job waited for as long as the scavenger jobs ran (this test failed so: Reason=
# Resources). Not told apart here: offered only the jobs that hold the node set's GPUs,
# cons_tres preempts those; offered every preemptable job, it preempts any on those nodes
# until enough GPUs are free there, whichever island they are in (on this pattern its order
# happens to free one island too). Backfill preempts for such a job as well (below).
source "$(dirname "$0")/lib.sh"

use_cluster nvlplace backfill --preempt
gpus_total=$(sinfo -h -N -p gpu -o '%G' | awk -F: '/gpu:/ { n += $NF + 0 } END { print n + 0 }')
((gpus_total > 0 && gpus_total % 2 == 0)) || fail "cannot count the cluster's GPUs ($gpus_total)"
running_count() { squeue -h -p scavenger,standby -t R -o %A | wc -l; }
all_running() { (($(running_count) == ${#scavengers[@]})); }

# fill [SBATCH_ARGS...]: every GPU held by a scavenger job of 2 GPUs, and the jobs these
# arguments give (also in the scavenger partition); scavengers and held (each job's GPUs).
fill() {
  reset_jobs
  scavengers=()
  for ((k = 0; k < gpus_total / 2; k++)); do scavengers+=("$(submit -p scavenger --gpus=2)"); done
  (($# == 0)) || scavengers+=("$(submit -p scavenger "$@")")
  nvl_wait_for 120 "${#scavengers[@]} scavenger jobs to run" all_running ||
    fail "only $(running_count) of ${#scavengers[@]} scavenger jobs run"
  held=()
  for j in "${scavengers[@]}"; do
    held[$j]=$(nvl_job_gpus "$j")
    [[ -z ${held[$j]} ]] || gpus_in_one_island "${held[$j]}" ||
      fail "scavenger job $j straddles islands (${held[$j]}): pattern broken"
  done
}

# preempted_for JOB [CPU_JOB]: checks that the preempted scavenger jobs are exactly the two
# that held JOB's GPUs (and CPU_JOB).
preempted_for() {
  local mine_list theirs j
  local preempted=() expected=()
  mine_list=$(nvl_job_gpu_list "$1")
  for j in "${scavengers[@]}"; do
    is_state "$j" RUNNING || preempted+=("$j")
    [[ -n ${held[$j]} ]] || continue
    # shellcheck disable=SC2086
    theirs=$("$NVL_CLI" check gpus ${held[$j]} | sort)
    [[ -z $(comm -12 <(echo "$mine_list") <(echo "$theirs")) ]] || expected+=("$j")
  done
  ((${#expected[@]} == 2)) || fail "job $1's 4 GPUs were held by ${#expected[@]} scavenger jobs, not 2"
  [[ -z ${2:-} ]] || expected+=("$2")
  note "preempted: ${preempted[*]}; expected: ${expected[*]}"
  [[ ${preempted[*]} == "${expected[*]}" ]] ||
    fail "preempted ${preempted[*]:-none} for job $1, expected ${expected[*]}"
}

declare -A held
fill
note "every GPU held: ${#scavengers[@]} scavenger jobs of 2 GPUs"
mark=$(log_mark)
tp=$(submit --gpus=4 --nvl-tp=4)
wait_state "$tp" RUNNING 120
# The promise, against what Slurm allocated (scontrol show job -d): the GPUs decided are the
# job's GPUs.
placed_in_one_island "$tp" 4
note "TP=4 job $tp runs on $mine"
log_line_has "$mark" "$tp" event=waiting "why~Slurm preempts 2 running jobs on" ||
  fail "no line of $tp saying what Slurm preempts for it"
preempted_for "$tp"

# The cores of node01 are full too: its 4 GPU jobs take one each, a CPU-only scavenger job the
# other 28. A TP=4 job there with 4 CPUs needs that job's cores as well as two GPU jobs'
# GPUs: offered only the GPU holders, cons_tres could never free enough cores, and the job
# waited.
cpus=$(sinfo -h -N -n node01 -p gpu -o '%c')
[[ $cpus =~ ^[0-9]+$ ]] && ((cpus > 4)) || fail "node01 has '$cpus' CPUs"
fill -w node01 -n "$((cpus - 4))"
cpu_job=${scavengers[-1]}
tp2=$(submit -w node01 --gpus=4 --nvl-tp=4 -c 4)
wait_state "$tp2" RUNNING 120
placed_in_one_island "$tp2" 4
note "TP=4 job $tp2 with 4 CPUs runs on $mine"
preempted_for "$tp2" "$cpu_job"

# In Slurm's own order: preempt/partition_prio preempts the jobs of the lowest PriorityTier
# first (slurmctld hands job_test its candidates in that order). Two jobs of scavenger
# (PriorityTier=1) hold one island of node09, jobs of standby (PriorityTier=2) every other
# GPU: the TP=4 job preempts the two scavenger jobs and runs on their island, not on an
# island of standby jobs that the engine, counting every preemptable GPU as free, liked as
# well or better.
reset_jobs
low=()
for k in 1 2; do low+=("$(submit -p scavenger -w node09 --gpus=2)"); done
for j in "${low[@]}"; do wait_state "$j" RUNNING; done
scavengers=()
for ((k = 0; k < gpus_total / 2 - 2; k++)); do scavengers+=("$(submit -p standby --gpus=2)"); done
scavengers+=("${low[@]}")
nvl_wait_for 120 "${#scavengers[@]} scavenger and standby jobs to run" all_running ||
  fail "only $(running_count) of ${#scavengers[@]} scavenger and standby jobs run"
held=()
for j in "${scavengers[@]}"; do held[$j]=$(nvl_job_gpus "$j"); done
# shellcheck disable=SC2086
low_list=$("$NVL_CLI" check gpus ${held[${low[0]}]} ${held[${low[1]}]} | sort)
gpus_in_one_island "$(tr '\n' ' ' <<<"$low_list")" ||
  fail "the two scavenger jobs on node09 do not fill one island: ${held[${low[0]}]} ${held[${low[1]}]}"
tp3=$(submit --gpus=4 --nvl-tp=4)
wait_state "$tp3" RUNNING 120
placed_in_one_island "$tp3" 4
note "TP=4 job $tp3 runs on $mine; the scavenger jobs held $(tr '\n' ' ' <<<"$low_list")"
[[ $(nvl_job_gpu_list "$tp3") == "$low_list" ]] ||
  fail "TP=4 job $tp3 runs on $mine, not on the island of the lowest-tier jobs ($(tr '\n' ' ' <<<"$low_list"))"
preempted_for "$tp3"

# Backfill preempts too. A job of the gpu partition waits for node15, which a job of the
# same partition holds (no preemption frees it), so the main scheduler tries no later job of
# the partition (Reason=Priority); scavenger jobs of 60 minutes hold every other GPU. A
# strict TP=4 job then starts only if backfill's will-run test says it starts now, by
# preempting, as cons_tres's own says: nvlplace said it starts when the scavenger jobs end,
# `sbatch --test-only` printed that hour, and the job waited it out.
reset_jobs
nodes=$(sinfo -h -N -p gpu -o '%N' | sort -u | wc -l)
blocker=$(submit -w node15 --gpus-per-node=8 -t 60)
wait_state "$blocker" RUNNING
scavengers=()
for ((k = 0; k < (gpus_total - 8) / 2; k++)); do scavengers+=("$(submit -p scavenger --gpus=2 -t 60)"); done
nvl_wait_for 120 "${#scavengers[@]} scavenger jobs to run" all_running ||
  fail "only $(running_count) of ${#scavengers[@]} scavenger jobs run"
held=()
for j in "${scavengers[@]}"; do held[$j]=$(nvl_job_gpus "$j"); done
out=$(sbatch --test-only --gpus=4 --nvl-tp=4 -t 5 --wrap 'sleep 1' 2>&1) ||
  fail "sbatch --test-only refused: $out"
asked=$(date +%s)
start=$(sed -n 's/.* to start at \([0-9T:-]*\) .*/\1/p' <<<"$out" | head -1)
[[ -n $start ]] || fail "sbatch --test-only said no start: $out"
note "sbatch --test-only: $(tr '\n' ' ' <<<"$out")"
(($(date -d "$start" +%s) <= asked + 5)) ||
  fail "sbatch --test-only plans the TP=4 job at $start, not now (by preempting)"
# The jobs it would preempt: the two that hold the island, as the start then preempts (not
# every candidate on the node).
read -r -a would <<<"$(sed -n 's/.*Preempts: *//p' <<<"$out" | tr ',' ' ')"
((${#would[@]} == 2)) || fail "sbatch --test-only would preempt ${would[*]:-none}, not 2 jobs"
waiting=$(submit -N"$nodes" --gpus-per-node=8 -t 10)
nvl_wait_for 30 "job $waiting to wait for resources" is_reason "$waiting" Resources ||
  fail "job $waiting is $(job_state "$waiting") ($(job_reason "$waiting")), not waiting for resources"
tp4=$(submit --gpus=4 --nvl-tp=4 -t 5)
wait_state "$tp4" RUNNING 30
placed_in_one_island "$tp4" 4
note "TP=4 job $tp4, behind job $waiting ($(job_state "$waiting"), $(job_reason "$waiting")), runs on $mine"
preempted_for "$tp4"
reset_jobs
note "ok"
