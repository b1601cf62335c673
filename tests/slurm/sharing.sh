#!/bin/bash
# A GPU shared out as gres/shard or gres/mps is in no job's gpu allocation, and cons_tres
# gives it to no gres/gpu job while any share of it is held. The plugin used to count it
# free: a strict TP job on node00, where a job held one shard of GPU 0, was offered GPUs
# 0-3 only, cons_tres refused them, and the job waited ("cons_tres refused the 1 node sets
# that keep it") while the island 4-7 stood free. Now a shared GPU is busy until its last
# share is given back: the job runs in the other island, as its comment says (checked
# against `scontrol show job -d`), and a second one waits for the shared island, backfill
# plans its start when the share's job ends, and it runs there once the share ends. For
# shards and for MPS, each on a cluster of its own; and for shards once more with a
# gres.conf that gives each node's GPUs in one line (File=/dev/nvidia[0-7]), as many sites
# write it. Then with preemption: a share held by a preemptable job is preempted for a
# strict job that needs its GPU (below). (The plugin's masking of the GPUs a job is not given leaves a shared GPU's
# counts to cons_tres, which takes it off its record's count itself; this pass placed the
# same before that change, so it guards the layout, not that arithmetic.)
source "$(dirname "$0")/lib.sh"
require_cluster_tools
files=$(mktemp -d)
trap 'rm -rf "$files"' EXIT
"$NVL_CLI" export slurm "$NVL_TOPOLOGY" --slurm-release "$(nvl_slurm_release)" \
  --out-dir "$files" >/dev/null || fail "export failed"
grep -v '^NodeName=' "$files/gres.conf" >"$files/one-line"
grep '^NodeName=' "$files/gres.conf" | head -1 |
  sed -e 's/ Links=[^ ]*//' -e 's#File=[^ ]*#File=/dev/nvidia[0-7]#' >>"$files/one-line"
(($(grep -c '^NodeName=node\[00-15\] Name=gpu .*File=/dev/nvidia\[0-7\]$' "$files/one-line") == 1)) ||
  fail "cannot write a one-line gres.conf from: $(grep '^NodeName=' "$files/gres.conf" | head -2)"
mv "$files/one-line" "$files/gres.conf"

# The GPU index whose shares job $1 holds on its node: `scontrol show job -d` gives
# GRES=shard:1(1/4,0/4,...), one used/total pair per GPU of the node (23.11 on), or
# GRES=shard:1(IDX:0) (22.05).
shared_gpu() {
  local d
  d=$(scontrol show job -d "$1" | sed -n 's/.* GRES=[a-z]*:[0-9]*(\([^)]*\)).*/\1/p')
  if [[ $d == IDX:* ]]; then
    d=${d#IDX:}
    echo "${d%%[-,]*}"
  else
    tr ',' '\n' <<<"$d" | grep -n '^[1-9]' | head -1 | cut -d: -f1 | awk '{print $1 - 1}'
  fi
}

for case in shard mps shard:one-line; do
  kind=${case%%:*}
  if [[ $case == *:one-line ]]; then
    NVLPLACE_SLURM_FILES=$files use_cluster nvlplace backfill --gpu-sharing "$kind"
    kind="$kind, one gres.conf line per node"
  else
    use_cluster nvlplace backfill --gpu-sharing "$kind"
  fi
  reset_jobs
  s=$(submit -w node00 "--gres=${case%%:*}:1" -t 5)
  wait_state "$s" RUNNING
  g=$(shared_gpu "$s")
  [[ $g =~ ^[0-7]$ ]] ||
    fail "cannot tell which GPU job $s shares: $(scontrol show job -d "$s" | grep GRES=)"
  if ((g < 4)); then busy=0-3 free=4-7; else busy=4-7 free=0-3; fi
  note "$kind: job $s holds a $kind of node00's GPU $g (island $busy)"

  # The island without the shared GPU is the only one a TP=4 job can have on node00.
  a=$(submit -w node00 --gpus=4 --nvl-tp=4)
  wait_state "$a" RUNNING 30
  placed_in_one_island "$a" 4
  [[ $mine == "node00:$free" ]] ||
    fail "$kind: the TP=4 job $a runs on $mine, not on node00:$free (GPU $g is shared)"
  note "$kind: job $a runs on $mine, beside the shared GPU's island, as its comment says"

  # The shared island waits for its share to end, and says so; backfill plans its start
  # when the share's job ends (WILL_RUN: a shared GPU frees with the last job holding a
  # share of it); then it is placed there.
  b=$(submit -w node00 --gpus=4 --nvl-tp=4 -t 10)
  nvl_wait_for 30 "job $b to say it waits" comment_has "$b" event=waiting tp=4 nvl=strict ||
    fail "$kind: job $b is $(job_state "$b"); its SystemComment says: $(job_comment "$b")"
  is_state "$b" PENDING || fail "$kind: job $b is $(job_state "$b") while GPU $g is shared"
  nvl_wait_for 30 "job $b to get a start time from backfill" has_start "$b" ||
    fail "$kind: job $b has no start time ($(start_of "$b")) while job $s ends at $(job_field "$s" EndTime)"
  [[ $(start_of "$b") == "$(job_field "$s" EndTime)" ]] ||
    fail "$kind: job $b starts at $(start_of "$b"), not when job $s ends ($(job_field "$s" EndTime))"
  note "$kind: job $b waits, planned to start at $(start_of "$b"), when job $s ends"
  scancel "$s"
  wait_state "$b" RUNNING 60
  placed_in_one_island "$b" 4
  [[ $mine == "node00:$busy" ]] || fail "$kind: job $b runs on $mine, not on node00:$busy"
  note "$kind: once job $s gave its share back, job $b runs on $mine, as its comment says"
done

# Preemption: a shard held by a job of a partition the gpu partition preempts does not keep a
# strict job waiting. The gpu partition holds node00's island without the shared GPU; a TP=4
# job there gets the shared island by preempting the share's job, as stock cons_tres preempts
# it for a gres/gpu job (the plugin used to count the shared GPU busy in its second look, and
# the job waited: "no free NVLink domain holds it").
# A CPU-only job of the scavenger partition runs there too, before the share's job (of the
# standby partition) in Slurm's order of preemption: up to 24.11 cons_tres's copy of the
# usage it preempts on ignores shares, and offered that job first it preempted it alone, and
# the TP job waited on.
use_cluster nvlplace backfill --gpu-sharing shard --preempt
reset_jobs
c=$(submit -p scavenger -w node00 -n 1)
wait_state "$c" RUNNING
s=$(submit -p standby -w node00 --gres=shard:1)
wait_state "$s" RUNNING
g=$(shared_gpu "$s")
[[ $g =~ ^[0-7]$ ]] || fail "cannot tell which GPU job $s shares: $(scontrol show job -d "$s" | grep GRES=)"
if ((g < 4)); then busy=0-3 free=4-7; else busy=4-7 free=0-3; fi
o=$(submit -p gpu -w node00 -N1 --gpus=4)
wait_state "$o" RUNNING
[[ $(nvl_job_gpus "$o") == "node00:$free" ]] ||
  fail "the gpu partition's job $o holds $(nvl_job_gpus "$o"), not node00:$free: pattern broken"
mark=$(log_mark)
t=$(submit -p gpu -w node00 -N1 --gpus=4 --nvl-tp=4)
wait_state "$t" RUNNING 60
placed_in_one_island "$t" 4
[[ $mine == "node00:$busy" ]] || fail "preempt: the TP=4 job $t runs on $mine, not on node00:$busy"
is_state "$s" RUNNING && fail "preempt: job $s still holds its shard of GPU $g"
is_state "$c" RUNNING || fail "preempt: the CPU-only job $c is $(job_state "$c"): preempted for nothing"
log_line_has "$mark" "$t" event=waiting "why~Slurm preempts 1 running job on node00 first" ||
  fail "no line of $t saying what Slurm preempts for it"
note "preempt: job $t runs on $mine after Slurm preempted job $s, which held a shard of GPU $g"
reset_jobs
