#!/bin/bash
# --nvl=strict waits (Reason=Resources, the topology reason in SystemComment and the log)
# while no NVLink island is free; --nvl=prefer runs at once, with the relaxation logged; the
# strict job starts inside whole islands once they free up. A strict job that can never fit
# this cluster (TP=8 over 4-GPU islands) is refused at submit time.
source "$(dirname "$0")/lib.sh"
use_cluster nvlplace
reset_jobs
mark=$(log_mark)

# Every node keeps GPUs 0-5 busy: 2 free GPUs per node, in island {4-7}; no island is free.
holders=()
for n in $(nvl_nodes); do holders+=("$(submit -w "$n" --gres=gpu:6)"); done
for h in "${holders[@]}"; do wait_state "$h" RUNNING; done
for h in "${holders[@]}"; do
  [[ $(nvl_job_gpus "$h") == *:0-5 ]] || fail "holder $h has $(nvl_job_gpus "$h"), not 0-5"
done

strict=$(submit --gpus=8 --nvl-tp=4)
nvl_wait_for 30 "job $strict to explain why it waits" comment_has "$strict" event=waiting ||
  fail "job $strict: $(scontrol show job "$strict" | grep -E 'JobState|SystemComment')"
[[ $(job_state "$strict") == PENDING && $(job_field "$strict" Reason) == Resources ]] ||
  fail "strict job is $(job_state "$strict") / $(job_field "$strict" Reason)"
comment_has "$strict" event=waiting "why~needs 2 TP groups of 4 GPUs, each inside one NVLink domain" ||
  fail "strict job's SystemComment: $(job_comment "$strict")"
log_line_has "$mark" "$strict" event=waiting asked_gpus=8 asked_nodes=any tp=4 pp=1 dp=2 \
  nvl=strict max_tier=none model=any exclusive=no ||
  fail "no waiting line for job $strict"

prefer=$(submit --gpus=8 --nvl-tp=4 --nvl=prefer)
wait_state "$prefer" RUNNING 60
note "prefer job runs on $(nvl_job_gpus "$prefer" | paste -sd' ')"
log_line_has "$mark" "$prefer" event=placed \
  "relaxations~nvl=prefer: TP groups of 4 GPUs may span NVLink domains" ||
  fail "no relaxation logged for job $prefer"
[[ $(job_state "$strict") == PENDING ]] || fail "strict job started without a free island"

# Free node07 entirely: the strict job takes its two islands.
scancel "${holders[7]}"
wait_state "$strict" RUNNING 60
got=$(nvl_job_gpus "$strict" | paste -sd' ')
note "strict job runs on $got"
[[ $got == node07:0-7 ]] || fail "strict job got $got, not node07's two islands"

# Never placeable here: refused when submitted, with the reason in the log.
if out=$(sbatch -o /dev/null --gpus=8 --nvl-tp=8 --wrap true 2>&1); then
  fail "TP=8 strict job accepted on 4-GPU islands: $out"
fi
[[ $out == *"nvlplace: never runnable on this cluster: 8 GPUs (TP=8 PP=1 DP=1, nvl=strict): needs 1 TP group of 8 GPUs inside one NVLink domain"* &&
   $out == *"Requested node configuration is not available"* ]] || fail "sbatch said: $out"
# job_submit/nvlplace's line: the same placement line, without a job id (there is none yet).
log_line_has "$mark" "" event=refused mode=test_only asked_gpus=8 tp=8 \
  "why~never runnable on this cluster: needs 1 TP group of 8 GPUs inside one NVLink domain" ||
  fail "no 'refused' line for the submission"
reset_jobs
note "ok"
