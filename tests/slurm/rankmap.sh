#!/bin/bash
# The job learns where it runs (issue 25, point 5): the select plugin hands the job its rank
# map (NVLPLACE_RANKMAP: nodes in rank order with their GPUs and NVLink domains) and the SPANK
# plugin gives each task its node's place in it. On a cluster whose tray names interleave two
# NVLink domains, a TP=8 job of four 4-GPU trays lands on node00 + node04 (rack-even) and
# node01 + node03 (rack-odd): Slurm's node order (00, 01, 03, 04) would put each TP group of
# 8 consecutive ranks into two racks; in the map's order every TP group is inside one.
source "$(dirname "$0")/lib.sh"
NVL_TOPOLOGY=$NVL_ROOT/tests/fixtures/cluster/nvl-interleaved.yaml
use_cluster nvlplace
reset_jobs
mkdir -p "$NVL_TEST_OUT"
out=$NVL_TEST_OUT/rankmap.out
rm -f "$out"
# Only trays 00, 04 (rack-even) and 01, 03 (rack-odd) may run it.
others=node[02,05-15]
scontrol update nodename="$others" state=drain reason=rankmap-test || fail "cannot drain $others"
trap 'scontrol update nodename="$others" state=resume >/dev/null 2>&1' EXIT
job=$(sbatch --parsable -o "$out" -N4 --gpus-per-node=4 --nvl-tp=8 --wrap '
echo "map=$NVLPLACE_RANKMAP"
echo "batch=$SLURMD_NODENAME $NVLPLACE_NODE_RANK $NVLPLACE_NUM_NODES"
echo "file=$NVLPLACE_RANKMAP_FILE"
sed "s/^/hostfile=/" "$NVLPLACE_RANKMAP_FILE"
srun -N4 --ntasks-per-node=1 --gpus-per-node=4 bash -c '"'"'echo "task=$SLURMD_NODENAME $SLURM_NODEID $NVLPLACE_NODE_RANK $NVLPLACE_FIRST_RANK $NVLPLACE_NODE_GPUS $NVLPLACE_NVLINK_DOMAIN"'"'"'
') || fail "sbatch refused"
job=${job%%;*}
wait_state "$job" COMPLETED
[[ -s $out ]] || fail "job $job wrote nothing to $out"
comment=$(job_comment "$job")
got=$(nvl_placement_log --comment "$comment" event=placed --field slurm_gpus) ||
  fail "job $job was not placed as decided: $comment"
[[ $got == "node00:0-3 node01:0-3 node03:0-3 node04:0-3" ]] || fail "job $job got $got"

map=$(sed -n 's/^map=//p' "$out")
read -r -a words <<<"$map"
[[ ${words[0]} == v1 && ${#words[@]} -eq 5 ]] || fail "rank map: '$map'"
# The map is the decision, in its rank order.
decided=$(nvl_placement_log --comment "$comment" --field gpus)
[[ $(printf '%s\n' "${words[@]:1}" | sed 's/:[^:]*$//' | paste -sd' ') == "$decided" ]] ||
  fail "rank map $map is not the decision $decided"
# The map's order keeps each TP group (two consecutive trays) inside one NVLink domain.
for g in 1 3; do
  a=${words[$g]##*:} b=${words[$((g + 1))]##*:}
  [[ $a == "$b" ]] || fail "TP group $(((g - 1) / 2)) spans $a and $b in the rank map: $map"
done
# Slurm's node order (by name) would put every TP group into two racks: what the map is for.
mapfile -t by_name < <(printf '%s\n' "${words[@]:1}" | sort)
for g in 0 2; do
  [[ ${by_name[$g]##*:} != "${by_name[$((g + 1))]##*:}" ]] ||
    fail "in node order TP group $((g / 2)) is inside one domain: the setup does not interleave: $map"
done
# The batch script and each task know their place; the task's GPUs and domain are the map's.
grep -q "^batch=\w* [0-3] 4$" "$out" || fail "batch step: $(grep '^batch=' "$out")"
tasks=$(grep -c '^task=' "$out")
[[ $tasks -eq 4 ]] || fail "$tasks tasks reported: $(cat "$out")"
for k in 1 2 3 4; do
  node=${words[$k]%%:*}
  rest=${words[$k]#*:}
  line=$(grep "^task=$node " "$out") || fail "no task on $node: $(cat "$out")"
  read -r _ _ rank first gpus domain <<<"$line"
  [[ $rank == $((k - 1)) && $first == $(((k - 1) * 4)) && "$gpus:$domain" == "$rest" ]] ||
    fail "task on $node: '$line', the map says rank $((k - 1)) ${words[$k]}"
done
# The rank map file: a hostfile in the map's order, on each node of the job; gone after it.
file=$(sed -n 's/^file=//p' "$out")
[[ $file == "$NVL_RUN/tmp/nvlplace-rankmap.$job" ]] || fail "NVLPLACE_RANKMAP_FILE is '$file'"
hosts=$(sed -n 's/^hostfile=\([^#][^ ]*\) slots=4 # .*/\1/p' "$out" | paste -sd' ')
[[ $hosts == "$(printf '%s\n' "${words[@]:1}" | cut -d: -f1 | paste -sd' ')" ]] ||
  fail "the rank map file's hosts '$hosts' are not the map's order: $(grep '^hostfile=' "$out")"
grep -q "^hostfile=node01 slots=4 # node_rank=[0-3] first_rank=[0-9]* gpus=0-3 nvlink_domain=rack-odd$" "$out" ||
  fail "rank map file: $(grep '^hostfile=' "$out")"
gone() { [[ ! -e $file ]]; }
nvl_wait_for 30 "the job's epilog to remove $file" gone || fail "$file is left after job $job"
note "rank map $map"
scontrol update nodename="$others" state=resume || fail "cannot resume $others"
reset_jobs
note "ok"
