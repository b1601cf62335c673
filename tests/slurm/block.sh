#!/bin/bash
# Beside Slurm's topology/block (issue 25, point 2): on a cluster of two 9-tray racks, each
# one block (BlockSizes=8,16: a rack less its spare tray), slurmctld runs topology/block and
# the plugin runs with slurm_blocks: true. Slurm's --segment is honoured (every segment of
# trays inside one rack, as topology/block would), nvlplace's options combine with it (a TP
# group of four trays with segments of two: the pair of segments shares a rack), the rack's
# spare tray stays free, a plain job stays inside one block, a strict job waits rather than
# split over the racks, and what can never run is refused at submit with the reason.
# Slurm 23.11 and later (topology/block); on 25.05+ the blocks come from topology.yaml.
source "$(dirname "$0")/lib.sh"
require_cluster_tools
nvl_release_at_least "$(nvl_slurm_release)" 23 11 ||
  skip "topology/block needs Slurm 23.11 or later; this is $(nvl_slurm_release)"
NVL_TOPOLOGY=$NVL_ROOT/tests/fixtures/cluster/nvl-2racks.yaml
NVL_SLURM_TOPOLOGY=block
use_cluster nvlplace
reset_jobs
release=$(nvl_slurm_release)
if nvl_release_at_least "$release" 25 5; then
  [[ -f $NVL_RUN/etc/topology.yaml ]] || fail "no topology.yaml beside slurm.conf on $release"
  grep -q 'block:' "$NVL_RUN/etc/topology.yaml" || fail "topology.yaml has no blocks"
else
  grep -q '^BlockName=rack0 Nodes=node\[00-08\]' "$NVL_RUN/etc/topology.conf" ||
    fail "topology.conf has no block per rack: $(cat "$NVL_RUN/etc/topology.conf")"
fi
# slurmctld runs the block plugin: scontrol shows the blocks.
topo=$(scontrol show topology 2>&1)
grep -q 'rack0' <<<"$topo" && grep -q 'rack1' <<<"$topo" ||
  fail "scontrol show topology does not show the racks as blocks: $topo"

rack_of() { # NODE: rack0 or rack1
  local n=${1#node}
  ((10#$n <= 8)) && echo rack0 || echo rack1
}
# racks_of JOB: "RACK COUNT" per rack of the job's decided nodes.
racks_of() {
  local nodes
  nodes=$(nvl_placement_log --comment "$(job_comment "$1")" event=placed --field slurm_gpus) ||
    fail "job $1 was not placed as decided: $(job_comment "$1")"
  for w in $nodes; do rack_of "${w%%:*}"; done | sort | uniq -c | awk '{ print $2, $1 }'
}
free_trays() { # RACK: trays of the rack with no job
  local busy n count=0
  busy=$(squeue -h -t R -o %N | xargs -r -n1 "$NVL_CLI" check hostlist --expand 2>/dev/null)
  for n in $(seq -w 0 17); do
    [[ $(rack_of "node$n") == "$1" ]] || continue
    grep -qx "node$n" <<<"$busy" || count=$((count + 1))
  done
  echo "$count"
}

# Five trays of rack0 busy: it has four free, one of them its spare, so three to give.
holders=()
for n in 00 01 02 03 04; do holders+=("$(submit -w "node$n" --gpus-per-node=4)"); done
for j in "${holders[@]}"; do wait_state "$j" RUNNING; done

# 1. Segments of 4 trays with TP groups of 16 GPUs (4 trays): topology/block alone would take
#    rack0's four free trays for one segment, its spare among them; nvlplace keeps the spare
#    and puts both segments in rack1 (eight trays, its spare left).
a=$(submit -N8 --gpus-per-node=4 --segment=4 --nvl-tp=16)
wait_state "$a" RUNNING
got=$(racks_of "$a")
[[ $got == "rack1 8" ]] || fail "job $a (--segment=4 --nvl-tp=16): racks $got, not all 8 trays in rack1"
comment_has "$a" event=placed || fail "job $a: $(job_comment "$a")"
[[ $(free_trays rack1) -eq 1 ]] || fail "rack1's spare tray was taken: $(squeue -o '%A %N')"
note "segment=4 TP=16: $(nvl_placement_log --comment "$(job_comment "$a")" --field slurm_gpus)"

# 2. A TP group of 4 trays over segments of 2: the two segments of a group share a rack, so
#    the job needs 4 trays in one rack; rack0 has 3 to give, rack1 none: it waits, strict.
b=$(submit -N4 --gpus-per-node=4 --segment=2 --nvl-tp=16)
nvl_wait_for 30 "job $b to be refused a split placement" comment_has "$b" event=waiting ||
  fail "job $b: $(job_state "$b") $(job_comment "$b")"
is_state "$b" PENDING || fail "job $b ran split: $(scontrol show job -d "$b" | grep -E 'Nodes=|GRES')"

# 3. A plain job, no nvlplace option, no -N: topology/block keeps it inside one block, and so
#    does the plugin (two trays of rack0).
c=$(submit --gpus=8)
wait_state "$c" RUNNING
got=$(racks_of "$c")
[[ $got == "rack0 2" ]] || fail "plain job $c (--gpus=8): racks $got, not 2 trays of rack0"
[[ $(free_trays rack0) -eq 2 ]] || fail "rack0: $(free_trays rack0) trays free, not 2"

# 4. Segments of one tray, TP=8 (two trays): the TP group keeps the pair together; rack0 has
#    one tray to give besides its spare: the job waits, strict. Behind b only backfill tries
#    it (Reason=Priority), and plans it for when the running jobs end (their time limit).
d=$(submit -N2 --gpus-per-node=4 --segment=1 --nvl-tp=8)
planned() { [[ $(job_field "$1" StartTime) == 20* ]]; }
nvl_wait_for 30 "backfill to plan job $d" planned "$d" ||
  fail "job $d: $(job_state "$d") $(scontrol show job "$d" | grep -E 'StartTime|Reason')"
is_state "$d" PENDING || fail "job $d ran split: $(scontrol show job -d "$d" | grep -E 'Nodes=|GRES')"
# The plain job ends: rack0 has four trays free again (one spare), so d fits in rack0 and
# starts; b (4 trays of one rack) still waits.
scancel "$c"
wait_state "$d" RUNNING 60
got=$(racks_of "$d")
[[ $got == "rack0 2" ]] || fail "job $d: racks $got, not 2 trays of rack0"
is_state "$b" PENDING || fail "job $b started: $(racks_of "$b")"

# 5. Refused at submit, with the reason: segments that do not divide the nodes, and a
#    segment larger than any rack.
for args in "-N8 --gpus-per-node=4 --segment=3 --nvl-tp=4" "-N10 --gpus-per-node=4 --segment=10"; do
  # shellcheck disable=SC2086
  if out=$(sbatch --parsable -o /dev/null $args --wrap 'sleep 1' 2>&1); then
    fail "sbatch $args was accepted (job ${out%%;*}): $(job_comment "${out%%;*}")"
  fi
  grep -qiE 'segment|NVLink domain|topology' <<<"$out" || fail "sbatch $args: no reason given: $out"
  note "refused: $args: $(paste -sd" " <<<"$out")"
done

# Every job that started ran where the plugin decided, against Slurm's own view.
for j in "${holders[@]}" "$a" "$d"; do
  comment_has "$j" event=placed || fail "job $j: $(job_comment "$j")"
done
reset_jobs

# 6. Slurm 25.11+: --spread-segments puts no two segments in one block, --consolidate-segments
#    keeps them all in one.
if nvl_release_at_least "$release" 25 11; then
  e=$(submit -N4 --gpus-per-node=4 --segment=2 --spread-segments --nvl-tp=8)
  f=$(submit -N4 --gpus-per-node=4 --segment=2 --consolidate-segments --nvl-tp=8)
  wait_state "$e" RUNNING
  wait_state "$f" RUNNING
  got=$(racks_of "$e" | paste -sd' ')
  [[ $got == "rack0 2 rack1 2" ]] || fail "job $e (--spread-segments): racks $got"
  got=$(racks_of "$f")
  [[ $got == "rack0 4" || $got == "rack1 4" ]] || fail "job $f (--consolidate-segments): racks $got"
  note "spread: $(racks_of "$e" | paste -sd' '); consolidate: $got"
  reset_jobs
fi

# 7. A failed tray replaced inside the job's rack (issue 25, point 3): a job of 8 trays (one
#    TP group) runs in a rack; one of its trays is drained and the job requeued. Both racks
#    could hold it again (the other with 8 trays besides its spare, its own with its spare):
#    it goes back to its own rack, on the spare, and its line says so.
g=$(submit --requeue -N8 --gpus-per-node=4 --nvl-tp=32)
wait_state "$g" RUNNING
rack=$(racks_of "$g")
[[ $rack == "rack0 8" || $rack == "rack1 8" ]] || fail "job $g: racks $rack"
rack=${rack% *}
before=$(nvl_placement_log --comment "$(job_comment "$g")" event=placed --field slurm_gpus)
failed=${before%%:*}
scontrol update nodename="$failed" state=drain reason=block-test-nvlink ||
  fail "cannot drain $failed"
trap 'scontrol update nodename="$failed" state=resume >/dev/null 2>&1' EXIT
scontrol requeue "$g" || fail "cannot requeue job $g"
# Slurm holds a requeued batch job until its old credentials expired (BeginTime, 2 minutes
# by default); the admin who replaces a tray starts it sooner, but not in the second its old
# step ended: slurmd refuses a credential created in the second its job's was revoked ("Job
# credential revoked", the job FAILED; seen in CI when the relaunch came 0.5 s after). Nor
# with a begin time a few seconds ahead (`starttime=now+3`, as this test did): a begin time
# that passes makes slurmctld schedule nothing, and with nothing else happening the job
# waited for the main scheduler's periodic pass (`sched_interval`, 60 s): 49-52 of the 60 s
# this wait had on 24.11.7. So: once the job is PENDING (its old step is gone), in the next
# second, `starttime=now`, which slurmctld schedules at once.
nvl_wait_for 30 "job $g to be requeued" is_state "$g" PENDING || fail "job $g: $(job_state "$g")"
requeued=$(date +%s)
later_second() { (($(date +%s) > requeued)); }
nvl_wait_for 2 "the second after job $g's requeue" later_second || fail "the clock stands still"
scontrol update jobid="$g" starttime=now || fail "cannot start job $g sooner"
again() { comment_has "$g" event=placed "back_to=$rack" && is_state "$g" RUNNING; }
nvl_wait_for 60 "job $g to start again" again ||
  fail "job $g after requeue: $(job_state "$g") $(job_comment "$g")"
got=$(racks_of "$g")
[[ $got == "$rack 8" ]] || fail "job $g left $rack for $got after the requeue"
after=$(nvl_placement_log --comment "$(job_comment "$g")" event=placed --field slurm_gpus)
grep -qw "$failed:0-3" <<<"$after" && fail "job $g runs on the drained tray $failed again: $after"
note "replaced $failed inside $rack: $before -> $after"
scontrol update nodename="$failed" state=resume || fail "cannot resume $failed"
reset_jobs
note "ok ($release)"
