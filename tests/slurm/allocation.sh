#!/bin/bash
# What the plugin decides is what Slurm allocates (issue 15). On partly free nodes a
# --gpus=8 job's per-node counts are cons_tres's to choose, and it packs the first node:
# node00 with GPU 0 busy and node01 with GPUs 4-7 busy (every other node full) give 7 + 1,
# a TP=4 group across two nodes. Stock cons_tres is shown doing that first; then nvlplace,
# in the main scheduler (sched/builtin) and through sched/backfill, must run the job as
# 4 + 4, each TP group inside one NVLink island, on exactly the GPUs its log line and the
# job's SystemComment name.
source "$(dirname "$0")/lib.sh"

# The busy pattern above; the holders run until reset_jobs.
make_pattern() {
  local h a b n holders=()
  reset_jobs
  h=$(submit -w node00 --gres=gpu:1)
  a=$(submit -w node01 --gres=gpu:4)
  wait_state "$h" RUNNING
  wait_state "$a" RUNNING
  b=$(submit -w node01 --gres=gpu:4)
  wait_state "$b" RUNNING
  [[ $(nvl_job_gpus "$h") == node00:0 && $(nvl_job_gpus "$a") == node01:0-3 &&
     $(nvl_job_gpus "$b") == node01:4-7 ]] ||
    fail "holders: $(nvl_job_gpus "$h") $(nvl_job_gpus "$a") $(nvl_job_gpus "$b")"
  scancel "$a"
  wait_state "$a" CANCELLED
  for n in $(nvl_nodes | tail -n +3); do holders+=("$(submit -w "$n" --gres=gpu:8)"); done
  for n in "${holders[@]}"; do wait_state "$n" RUNNING; done
}

# Jobs sched/backfill started since slurmctld started. 26.05 no longer logs its start line
# ("sched/backfill: _start_job: Started" up to 24.11; since then only under
# DebugFlags=HetJob), so the count tells backfill's starts on every release.
backfilled() { sdiag | sed -n 's/.*Total backfilled jobs (since last slurm start): *//p'; }

# expect_decided JOB STARTED_BY [BACKFILLED_BEFORE]: the job runs on the decision, which the
# log and the SystemComment name, and was started by the given scheduler: "main" (its
# "sched: Allocate" line) or "backfill" (backfill's count went up by one since
# BACKFILLED_BEFORE, and the main scheduler logged no start).
expect_decided() {
  local job=$1 by=$2 got want="node00:4-7 node01:0-3"
  wait_state "$job" RUNNING 60
  got=$(nvl_job_gpus "$job" | paste -sd' ')
  note "job $job runs on $got"
  [[ $got == "$want" ]] || fail "job $job got $got, not the decision $want"
  tp_groups_split 4 "$job" && fail "job $job split a TP group"
  local request=(asked_gpus=8 asked_nodes=any tp=4 pp=1 dp=2 nvl=strict max_tier=none model=any
                 exclusive=no)
  log_line_has "$mark" "$job" event=placed "${request[@]}" "gpus=$want" \
    domains=node00:nvl1,node01:nvl0 "slurm_gpus=$want" candidate=1 relaxations=none ||
    fail "no placement line naming the allocation for job $job"
  comment_has "$job" event=placed "${request[@]}" "gpus=$want" domains=node00:nvl1,node01:nvl0 \
    relaxations=none || fail "SystemComment of $job: $(job_comment "$job")"
  if [[ $by == main ]]; then
    log_has "$mark" "sched: Allocate JobId=$job[^0-9]" ||
      fail "job $job was not started by the main scheduler"
  else
    ! log_has "$mark" "sched: Allocate JobId=$job[^0-9]" ||
      fail "job $job was started by the main scheduler, not sched/backfill"
    [[ $(backfilled) == $(($3 + 1)) ]] ||
      fail "job $job: sched/backfill started $(($(backfilled) - $3)) jobs, not this one"
  fi
}

# Stock: the per-node counts are cons_tres's, and a TP group spans node00 and node01.
use_cluster cons_tres builtin
make_pattern
job=$(submit --gpus=8 --nvl-tp=4)
wait_state "$job" RUNNING
got=$(nvl_job_gpus "$job" | paste -sd' ')
note "stock cons_tres: $got"
tp_groups_split 4 "$job" >/dev/null || fail "stock cons_tres kept the TP groups whole ($got): pattern broken"

# nvlplace, main scheduler.
use_cluster nvlplace builtin
make_pattern
mark=$(log_mark)
job=$(submit --gpus=8 --nvl-tp=4)
expect_decided "$job" main

# nvlplace, backfill: a blocker that cannot start holds the partition in the main scheduler
# (later jobs wait with Reason=Priority there), so only sched/backfill can start the job.
use_cluster nvlplace backfill
make_pattern
mark=$(log_mark)
blocker=$(submit -N16 --gpus-per-node=8)
nvl_wait_for 30 "job $blocker to wait for resources" is_reason "$blocker" Resources ||
  fail "blocker $blocker: $(job_state "$blocker") / $(job_field "$blocker" Reason)"
before=$(backfilled)
[[ $before =~ ^[0-9]+$ ]] || fail "sdiag gave no backfill count: $(sdiag 2>&1 | head -3)"
job=$(submit --gpus=8 --nvl-tp=4)
expect_decided "$job" backfill "$before"
[[ $(job_state "$blocker") == PENDING ]] || fail "blocker $blocker is $(job_state "$blocker")"

# An --exclusive GPU job (Slurm's test39.16 shape): cons_tres gives it every GPU of its node
# and refuses it a node with a GPU allocated, so the node set is the wholly free node, all of
# it; before, every node set was refused and cons_tres placed the job alone.
reset_jobs
h=$(submit -w node00 --gres=gpu:1)
wait_state "$h" RUNNING
mark=$(log_mark)
job=$(submit --gpus=2 --nvl-tp=2 --exclusive)
wait_state "$job" RUNNING 60
got=$(nvl_job_gpus "$job" | paste -sd' ')
note "--exclusive job $job runs on $got"
[[ $got =~ ^node[0-9]+:0-7$ && $got != node00:* ]] || fail "--exclusive job $job got $got"
log_line_has "$mark" "$job" event=placed asked_gpus=2 tp=2 nvl=strict exclusive=yes "gpus=$got" \
  "slurm_gpus=$got" candidate=1 ||
  fail "--exclusive job $job: $(log_since "$mark" | grep "JobId=$job " | tail -2)"
# --exclusive=mcs (no MCSPlugin here) shares nodes as a plain job does: before 24.05 Slurm
# keeps it as whole_node 3, which a bit test read as --exclusive (all 8 GPUs said taken).
scancel "$job"
wait_state "$job" CANCELLED
mark=$(log_mark)
job=$(submit --gpus=2 --nvl-tp=2 --exclusive=mcs)
wait_state "$job" RUNNING 60
got=$(nvl_job_gpus "$job" | paste -sd' ')
note "--exclusive=mcs job $job runs on $got"
[[ $got =~ ^node[0-9]+:[0-9]+[-,][0-9]+$ ]] || fail "--exclusive=mcs job $job got $got"
log_line_has "$mark" "$job" event=placed asked_gpus=2 tp=2 nvl=strict exclusive=no "gpus=$got" \
  "slurm_gpus=$got" ||
  fail "--exclusive=mcs job $job: $(log_since "$mark" | grep "JobId=$job " | tail -2)"
reset_jobs
note "ok"
