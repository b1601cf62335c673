#!/bin/bash
# Scheduling overhead of select/cons_tres_nvlplace against stock select/cons_tres: the same
# burst of mixed GPU jobs is submitted to the local cluster twice, once per plugin, and
# sdiag's main scheduler and backfill cycle times are compared (a measurement, not a test).
#   contrib/cluster/bench.sh [--jobs N] [--rounds R] [--topology FILE]
# (default 500 jobs, 3 rounds, lab-islands). Each round runs the burst once per plugin,
# alternating; the cycle statistics of all rounds are pooled (total cycle time / cycles),
# and the time per job tested (total cycle time / jobs tested) is shown beside the mean,
# because a cycle's length depends on how deep it went. Prints one table; the cluster is
# left stopped.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/common.sh"
jobs=500
rounds=3
topology=$NVL_ROOT/configs/lab-islands.yaml
while (($#)); do
  case $1 in
    --jobs) jobs=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --topology) topology=$2; shift 2 ;;
    *) echo "bench.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
# Resolved before leaving the caller's directory: a relative --topology used to fail here.
topology=$(realpath "$topology") || { echo "bench.sh: no such topology file" >&2; exit 2; }
cd /tmp

# The burst: a fixed mix of sizes (seeded), half of them with nvlplace options. Each job
# runs 1-4 s, so the queue drains while it is being scheduled.
burst() {
  local i sizes=(1 2 4 8 16 4 2 8) tps=(1 2 4 4 8 4 1 8) size tp secs
  for ((i = 0; i < jobs; i++)); do
    size=${sizes[i % 8]}
    tp=${tps[(i / 8) % 8]}
    ((tp > size)) && tp=$size
    secs=$((1 + i % 4))
    if ((i % 2)); then
      sbatch -Q -o /dev/null --gpus="$size" --nvl-tp="$tp" --nvl=prefer --wrap "sleep $secs"
    else
      sbatch -Q -o /dev/null --gpus="$size" --wrap "sleep $secs"
    fi
  done
}

# sdiag: "<main cycles> <main total us> <main jobs tested> <bf cycles> <bf total us>
# <bf jobs tried> <main max> <bf max>" (means times cycles; backfill counts the jobs it
# tried to place, the ones that reach select_p_job_test).
stats() {
  sdiag | awk '
    /^Main schedule statistics/ {s = "main"} /^Backfilling stats/ {s = "bf"}
    /^Latency|^Remote Procedure Call/ {s = ""}
    s != "" && /Mean cycle:/ {m[s] = $3} s != "" && /Max cycle:/ {x[s] = $3}
    s != "" && /Total cycles:/ {c[s] = $3}
    s == "main" && /Mean depth cycle:/ {d[s] = $4} s == "bf" && /Depth Mean \(try depth\):/ {d[s] = $5}
    END {print c["main"], m["main"] * c["main"], d["main"] * c["main"],
               c["bf"], m["bf"] * c["bf"], d["bf"] * c["bf"], x["main"], x["bf"]}'
}

declare -A sum
for ((round = 1; round <= rounds; round++)); do
  for select in cons_tres nvlplace; do
    "$here/stop.sh"
    "$here/start.sh" --topology "$topology" --select "$select" >/dev/null
    sdiag -r >/dev/null
    start=$SECONDS
    burst
    nvl_wait_for 900 "the burst to finish" bash -c '[[ -z $(squeue -h -o %A) ]]'
    read -r mc mt md bc bt bd mx bx <<<"$(stats)"
    echo "bench: round $round, $select: $jobs jobs in $((SECONDS - start)) s; main $mc cycles," \
      "mean $((mc ? mt / mc : 0)) us; backfill $bc cycles, mean $((bc ? bt / bc : 0)) us" >&2
    for k in mc mt md bc bt bd; do sum[$select.$k]=$((${sum[$select.$k]:-0} + ${!k%.*})); done
    sum[$select.mx]=$(( ${mx%.*} > ${sum[$select.mx]:-0} ? ${mx%.*} : ${sum[$select.mx]:-0} ))
    sum[$select.bx]=$(( ${bx%.*} > ${sum[$select.bx]:-0} ? ${bx%.*} : ${sum[$select.bx]:-0} ))
    sum[$select.wall]=$((${sum[$select.wall]:-0} + SECONDS - start))
  done
done
"$here/stop.sh"

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }'; }
per() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.0f", a / b; else print "n/a" }'; }
row() {  # row LABEL CONS_TRES NVLPLACE
  echo "| $1 | $2 | $3 | $(ratio "$3" "$2") |"
}
c=cons_tres n=nvlplace
echo "| $jobs jobs x $rounds rounds, $(basename "$topology") | cons_tres | cons_tres_nvlplace | ratio |"
echo "|---|---|---|---|"
row "main scheduler mean cycle (us)" "$(per "${sum[$c.mt]}" "${sum[$c.mc]}")" "$(per "${sum[$n.mt]}" "${sum[$n.mc]}")"
row "main scheduler time per job tested (us)" "$(per "${sum[$c.mt]}" "${sum[$c.md]}")" "$(per "${sum[$n.mt]}" "${sum[$n.md]}")"
row "main scheduler max cycle (us)" "${sum[$c.mx]}" "${sum[$n.mx]}"
echo "| main scheduler cycles | ${sum[$c.mc]} | ${sum[$n.mc]} | |"
row "backfill mean cycle (us)" "$(per "${sum[$c.bt]}" "${sum[$c.bc]}")" "$(per "${sum[$n.bt]}" "${sum[$n.bc]}")"
row "backfill time per job tested (us)" "$(per "${sum[$c.bt]}" "${sum[$c.bd]}")" "$(per "${sum[$n.bt]}" "${sum[$n.bd]}")"
row "backfill max cycle (us)" "${sum[$c.bx]}" "${sum[$n.bx]}"
echo "| backfill cycles | ${sum[$c.bc]} | ${sum[$n.bc]} | |"
echo "| wall time, all rounds (s) | ${sum[$c.wall]} | ${sum[$n.wall]} | |"
