#!/bin/bash
# Scheduling overhead of select/cons_tres_nvlplace against stock select/cons_tres: the same
# burst of mixed GPU jobs is submitted to the local cluster twice, once per plugin, and
# sdiag's main scheduler and backfill cycle times are compared (a measurement, not a test).
#   contrib/cluster/bench.sh [--jobs N] [--topology FILE]   (default 500, lab-islands)
# Prints one table; the cluster is left stopped.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/common.sh"
jobs=500
topology=$NVL_ROOT/configs/lab-islands.yaml
while (($#)); do
  case $1 in
    --jobs) jobs=$2; shift 2 ;;
    --topology) topology=$2; shift 2 ;;
    *) echo "bench.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
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

# sdiag: "<main mean> <main max> <main cycles> <bf mean> <bf max> <bf cycles>" (us).
stats() {
  sdiag | awk '
    /^Main schedule statistics/ {s = "main"} /^Backfilling stats/ {s = "bf"}
    /^Remote Procedure Call/ {s = ""}
    s != "" && /Mean cycle:/ {m[s] = $3} s != "" && /Max cycle:/ {x[s] = $3}
    s != "" && /Total cycles:/ {c[s] = $3}
    END {print m["main"], x["main"], c["main"], m["bf"], x["bf"], c["bf"]}'
}

declare -A result
for select in cons_tres nvlplace; do
  "$here/stop.sh"
  "$here/start.sh" --topology "$topology" --select "$select" >/dev/null
  sdiag -r >/dev/null
  start=$SECONDS
  burst
  nvl_wait_for 900 "the burst to finish" bash -c '[[ -z $(squeue -h -o %A) ]]'
  result[$select]="$(stats) $((SECONDS - start))"
  echo "bench: $select: $jobs jobs in $((SECONDS - start)) s" >&2
done
"$here/stop.sh"

read -r cm cx cc bm bx bc ct <<<"${result[cons_tres]}"
read -r nm nx nc pm px pc nt <<<"${result[nvlplace]}"
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }'; }
echo "| $jobs jobs, $(basename "$topology") | cons_tres | cons_tres_nvlplace | ratio |"
echo "|---|---|---|---|"
echo "| main scheduler mean cycle (us) | $cm | $nm | $(ratio "$nm" "$cm") |"
echo "| main scheduler max cycle (us) | $cx | $nx | $(ratio "$nx" "$cx") |"
echo "| main scheduler cycles | $cc | $nc | |"
echo "| backfill mean cycle (us) | $bm | $pm | $(ratio "$pm" "$bm") |"
echo "| backfill max cycle (us) | $bx | $px | $(ratio "$px" "$bx") |"
echo "| backfill cycles | $bc | $pc | |"
echo "| wall time (s) | $ct | $nt | |"
