#!/bin/bash
# Backfill reserves for a strict TP job that cannot start now: sched/backfill asks the plugin
# in WILL_RUN mode when the job could start, and nvlplace answers with the end time of the
# running job whose GPUs complete an NVLink island (cons_tres alone would count GPUs, and
# without an answer the job gets no start time and no reservation). The start time shows in
# `squeue --start`, and a smaller, later job that would hold the island's free GPUs past that
# time is not started there: it does not delay the strict job.
source "$(dirname "$0")/lib.sh"
use_cluster nvlplace
reset_jobs

# Every node full for an hour but node05. On node05: GPUs 0-1 held by a job with a 5-minute
# limit, 2-3 free, island {4-7} held for an hour. The first island to be whole again is
# node05's {0-3}, when the short job ends.
holders=()
for n in $(nvl_nodes); do
  [[ $n == node05 ]] || holders+=("$(submit -w "$n" --gres=gpu:8 -t 60)")
done
short=$(submit -w node05 --gres=gpu:2 -t 5)
wait_state "$short" RUNNING
spacer=$(submit -w node05 --gres=gpu:2 -t 60)
wait_state "$spacer" RUNNING
long=$(submit -w node05 --gres=gpu:4 -t 60)
wait_state "$long" RUNNING
for h in "${holders[@]}"; do wait_state "$h" RUNNING; done
[[ $(nvl_job_gpus "$short") == node05:0-1 && $(nvl_job_gpus "$spacer") == node05:2-3 &&
   $(nvl_job_gpus "$long") == node05:4-7 ]] ||
  fail "unexpected holders on node05: $(nvl_job_gpus "$short") $(nvl_job_gpus "$spacer") $(nvl_job_gpus "$long")"
scancel "$spacer"
wait_state "$spacer" CANCELLED

strict=$(submit --gpus=4 --nvl-tp=4 -t 10)
nvl_wait_for 30 "job $strict to get a start time from backfill" has_start "$strict" ||
  fail "strict job $strict has no start time ($(start_of "$strict")): $(scontrol show job "$strict" | grep -E 'Reason|SystemComment')"
expected=$(job_field "$short" EndTime)
[[ $(start_of "$strict") == "$expected" ]] ||
  fail "strict job $strict starts at $(start_of "$strict"), not when job $short ends ($expected)"
[[ $(job_state "$strict") == PENDING ]] || fail "strict job $strict is $(job_state "$strict")"
note "strict job $strict: start time $(start_of "$strict"), when job $short ends"

# A smaller job submitted later (lower priority) fits now on node05's free GPUs 2-3, but would
# hold them for an hour, past the strict job's start: backfill must leave it pending.
bf_cycles() { sdiag | awk '/^Backfilling stats/ {s = 1} s && /Total cycles:/ {print $3; exit}'; }
small=$(submit --gpus=2 -t 60)
cycles=$(bf_cycles)
[[ $cycles =~ ^[0-9]+$ ]] || fail "sdiag gave no backfill cycle count: $(sdiag 2>&1 | head -3)"
two_cycles_later() { (($(bf_cycles) >= cycles + 2)); }
nvl_wait_for 60 "two backfill cycles" two_cycles_later || fail "backfill did not run"
[[ $(job_state "$small") == PENDING ]] ||
  fail "job $small ($(nvl_job_gpus "$small")) started inside the strict job's reservation"
has_start "$strict" || fail "strict job $strict lost its start time"

# The short job ends (cancelled, earlier than its limit): the strict job takes the island,
# before its reserved time, and the smaller job still waits.
scancel "$short"
wait_state "$strict" RUNNING 60
got=$(nvl_job_gpus "$strict" | paste -sd' ')
[[ $got == node05:0-3 ]] || fail "strict job got $got, not node05:0-3"
[[ $(job_state "$small") == PENDING ]] || fail "job $small is $(job_state "$small")"
reset_jobs
note "ok"
