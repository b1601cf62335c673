#!/bin/bash
# A TP-strict job lands inside one NVLink island, while stock select/cons_tres, on the same
# busy pattern, splits it: node00 has 4 free GPUs split 2 + 2 over its islands (first fit
# takes them), and on a node with GPU 0 busy cons_tres takes 1-4 (lowest index first, Links=
# only gathers the rest around it) where 4-7 is a whole free island. A plain job (no options)
# of 4 GPUs on such a node, too: nvlplace gives it the free island, so that its all-reduce
# stays on NVLink (it took 1-4, as stock does, until a job's GPUs came from one island where
# one holds them).
source "$(dirname "$0")/lib.sh"

# prints "<gpus of the split-pattern job>|<gpus of the GPU0-busy job>|<job ids>|<gpus of the
# plain job>"
run_case() {
  local holders tp tp2 h0 h6 plain
  reset_jobs
  holders=$(make_split_pattern)
  tp=$(submit --gpus=4 --nvl-tp=4)
  wait_state "$tp" RUNNING
  h0=$(submit -w node05 --gres=gpu:1)
  wait_state "$h0" RUNNING
  [[ $(nvl_job_gpus "$h0") == node05:0 ]] || fail "holder on node05 has $(nvl_job_gpus "$h0"), not GPU 0"
  tp2=$(submit -w node05 --gpus=4 --nvl-tp=4)
  wait_state "$tp2" RUNNING
  h6=$(submit -w node06 --gres=gpu:1)
  wait_state "$h6" RUNNING
  [[ $(nvl_job_gpus "$h6") == node06:0 ]] || fail "holder on node06 has $(nvl_job_gpus "$h6"), not GPU 0"
  plain=$(submit -w node06 -N1 --gpus=4)
  wait_state "$plain" RUNNING
  echo "$(nvl_job_gpus "$tp" | paste -sd' ')|$(nvl_job_gpus "$tp2" | paste -sd' ')|$tp|$tp2|$(nvl_job_gpus "$plain" | paste -sd' ')|$plain"
}

use_cluster cons_tres
IFS='|' read -r stock stock2 _ _ stock_plain _ <<<"$(run_case)"
note "stock cons_tres: split pattern -> $stock; GPU 0 busy -> $stock2; plain job -> $stock_plain"
[[ $stock == node00:* ]] || fail "stock cons_tres was expected on node00 (first fit), got $stock"
gpus_in_one_island "$stock" && fail "stock cons_tres kept the group in one island ($stock): pattern broken"
gpus_in_one_island "$stock2" && fail "stock cons_tres kept node05's group in one island ($stock2)"
gpus_in_one_island "$stock_plain" && fail "stock cons_tres kept node06's plain job in one island ($stock_plain)"

use_cluster nvlplace
mark=$(log_mark)
IFS='|' read -r mine mine2 job job2 mine_plain plain <<<"$(run_case)"
note "nvlplace: split pattern -> $mine; GPU 0 busy -> $mine2; plain job -> $mine_plain"
gpus_in_one_island "$mine" || fail "TP=4 strict job split over islands: $mine"
[[ $mine != node00:* ]] || fail "TP=4 strict job on node00, whose free GPUs are split: $mine"
[[ $mine2 == node05:4-7 ]] || fail "TP=4 strict job on node05 got $mine2, not the free island 4-7"
tp4=(asked_gpus=4 asked_nodes=any tp=4 pp=1 dp=1 nvl=strict max_tier=none model=any exclusive=no)
log_line_has "$mark" "$job" event=placed "${tp4[@]}" ||
  fail "no placement line for job $job in $NVL_CTLD_LOG"
log_line_has "$mark" "$job2" event=placed slurm_gpus=node05:4-7 candidate=1 ||
  fail "no placement line with Slurm's GPUs for job $job2"
comment_has "$job" event=placed "${tp4[@]}" domains~nvl span_domains=1 ||
  fail "SystemComment of $job: $(job_comment "$job")"
# The plain job: the free island, as its placement line says (Slurm's GPUs in it too).
[[ $mine_plain == node06:4-7 ]] || fail "plain 4-GPU job on node06 got $mine_plain, not the free island 4-7"
log_line_has "$mark" "$plain" event=placed asked_gpus=4 tp=1 gpus=node06:4-7 \
  span_domains=1 slurm_gpus=node06:4-7 || fail "no placement line for the plain job $plain"

# -w naming every node of the job: nvlplace chooses among exactly those nodes, and each TP
# group still stays inside one island.
mark=$(log_mark)
wjob=$(submit -w "node[08-09]" --gpus=8 --nvl-tp=4)
wait_state "$wjob" RUNNING
[[ $(job_field "$wjob" NodeList) == "node[08-09]" ]] || fail "job $wjob on $(job_field "$wjob" NodeList)"
got=$(nvl_job_gpus "$wjob")
gpus_in_one_island "$got" || fail "the -w job split a TP group: $got"
log_line_has "$mark" "$wjob" event=placed asked_gpus=8 asked_nodes=2 tp=4 pp=1 dp=2 nvl=strict \
  max_tier=none model=any exclusive=no ||
  fail "no placement line for the -w job $wjob"
# -w naming only some of the job's nodes: nvlplace cannot promise the TP groups there, so
# the job is refused at submit time, with the reason.
if out=$(sbatch -o /dev/null -w node10 -N2 --gpus=8 --nvl-tp=4 --wrap true 2>&1); then
  fail "a strict job with -w naming 1 of its 2 nodes was accepted: $out"
fi
[[ $out == *"nvlplace: -w names 1 node(s) for a job of 2 node(s)"* ]] || fail "sbatch said: $out"
reset_jobs
note "ok"
