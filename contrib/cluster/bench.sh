#!/bin/bash
# Scheduling overhead of select/cons_tres_nvlplace against stock select/cons_tres: the same
# burst of mixed GPU jobs is submitted to the local cluster twice, once per plugin, and
# sdiag's main scheduler and backfill cycle times are compared (a measurement, not a test).
# Usage: contrib/cluster/bench.sh [--jobs N] [--rounds R] [--topology FILE | --fabric KIND:GPUS]
#                            [--queued [--submitters K]]
# (default 500 jobs, 3 rounds, lab-islands, each job submitted while the earlier ones run).
# --fabric    a cluster from contrib/tools/gen_fabric.py (h100-rail:8192 is 1,024 nodes of
#             8 GPUs), written into the run directory for this run (never committed)
# --queued    the whole burst is queued before any job may start (submitted into the
#             partition while it is DOWN, each job with its fixed priority, then the
#             partition is set UP): both plugins get the very same queue at the same moment,
#             however long the submission took; the wall time counts from the UP
# --submitters with --queued, that many sbatch at a time (default 2; the order of the queue
#             comes from the priorities, not from the order of submission)
# Each round runs the burst once per plugin, alternating; the cycle statistics of all rounds
# are pooled (total cycle time / cycles), and the time per job tested (total cycle time /
# jobs tested) is shown beside the mean, because a cycle's length depends on how deep it
# went; the main scheduler's cycles until the burst's last job started are shown apart from
# the ones after it (an empty queue while the last jobs run: short cycles whose number
# moves the pooled mean). sdiag's cycle times are wall time, and slurmctld's threads share
# one CPU here (beyond 64 nodes: the other runs the slurmd): a cycle also lasts while the
# backfill and RPC threads run. So the CPU time of the main scheduler's and the backfill's
# threads over the burst (/proc's schedstat of slurmctld's sched_agent and bckfl threads)
# is shown beside them, per cycle and per job: the schedulers' own work. Prints one table;
# the cluster is left stopped.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/common.sh"
jobs=500
rounds=3
topology=$NVL_ROOT/configs/lab-islands.yaml
fabric=
queued=
submitters=2
while (($#)); do
  case $1 in
    --jobs) jobs=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --topology) topology=$2; shift 2 ;;
    --fabric) fabric=$2; shift 2 ;;
    --queued) queued=1; shift ;;
    --submitters) submitters=$2; shift 2 ;;
    -h|--help) sed -n '2,26p' "$0"; exit 0 ;;
    *) echo "bench.sh: unknown argument $1" >&2; sed -n '2,26p' "$0" >&2; exit 2 ;;
  esac
done
[[ $jobs =~ ^[1-9][0-9]*$ && $rounds =~ ^[1-9][0-9]*$ && $submitters =~ ^[1-9][0-9]*$ ]] ||
  { echo "bench.sh: --jobs, --rounds and --submitters take whole numbers from 1" >&2; exit 2; }
if [[ -n $fabric ]]; then
  [[ $fabric =~ ^([a-z0-9-]+):([1-9][0-9]*)$ ]] ||
    { echo "bench.sh: --fabric takes KIND:GPUS, e.g. h100-rail:8192" >&2; exit 2; }
  mkdir -p "$NVL_RUN/etc"
  topology=$NVL_RUN/etc/fabric-${BASH_REMATCH[1]}-${BASH_REMATCH[2]}.yaml
  python3 "$NVL_ROOT/contrib/tools/gen_fabric.py" "${BASH_REMATCH[1]}" "${BASH_REMATCH[2]}" \
    --out "$topology"
fi
# Resolved before leaving the caller's directory: a relative --topology used to fail here.
topology=$(realpath "$topology") || { echo "bench.sh: no such topology file" >&2; exit 2; }
cd /tmp

# Every round runs one copy of the build's nvlplace plugins and CLI, taken under the build
# lock (contrib/build.sh holds it while it builds): the build tree may be rebuilt during a
# run of an hour, and once its select .so was relinked between two rounds and every slurmd
# stopped ("Can't find plugin for select/cons_tres_nvlplace").
snap=$NVL_RUN/bench-build
rm -rf "$snap"
mkdir -p "$snap/plugin/lib" "$snap/contrib"
flock -w 1800 /tmp/nvlplace-build.lock cp "$NVL_PLUGIN_LIB"/*nvlplace*.so "$NVL_CLI" "$snap/plugin/lib/"
mv "$snap/plugin/lib/nvlplace" "$snap/contrib/nvlplace"
export NVLPLACE_BUILD_DIR=$snap NVLPLACE_PLUGIN_LIB=$snap/plugin/lib
echo "bench: plugins and CLI of $NVL_BUILD copied to $snap (select .so sha256" \
  "$(sha256sum "$snap/plugin/lib/select_cons_tres_nvlplace.so" | cut -c1-12))" >&2

# The burst: a fixed mix of sizes (seeded), half of them with nvlplace options. Each job
# runs 1-4 s, so the queue drains while it is being scheduled.
# burst FIRST STEP: jobs FIRST, FIRST + STEP, ... of the burst (one submitter's share).
burst() {
  local i sizes=(1 2 4 8 16 4 2 8) tps=(1 2 4 4 8 4 1 8) size tp secs prio=()
  for ((i = $1; i < jobs; i += $2)); do
    size=${sizes[i % 8]}
    tp=${tps[(i / 8) % 8]}
    ((tp > size)) && tp=$size
    secs=$((1 + i % 4))
    # Queued: job i is the i-th in the queue whichever sbatch reached slurmctld first.
    [[ -z $queued ]] || prio=(--priority=$((jobs - i)))
    if ((i % 2)); then
      sbatch -Q -o /dev/null "${prio[@]}" --gpus="$size" --nvl-tp="$tp" --nvl=prefer --wrap "sleep $secs"
    else
      sbatch -Q -o /dev/null "${prio[@]}" --gpus="$size" --wrap "sleep $secs"
    fi
  done
}

# sdiag: "<main cycles> <main total us> <main jobs tested> <bf cycles> <bf total us>
# <bf jobs tried> <main max> <bf max>" (means times cycles; backfill counts the jobs it
# tried to place, the ones that reach select_p_job_test).
# sdiag ARGS, asked again when slurmctld is too busy to answer in MessageTimeout.
sdiag_try() {
  local try
  for try in 1 2 3 4 5; do sdiag "$@" 2>/dev/null && return 0; sleep 1; done
  nvl_log "sdiag did not answer 5 times"
  return 1
}

stats() {
  sdiag_try | awk '
    /^Main schedule statistics/ {s = "main"} /^Backfilling stats/ {s = "bf"}
    /^Latency|^Remote Procedure Call/ {s = ""}
    s != "" && /Mean cycle:/ {m[s] = $3} s != "" && /Max cycle:/ {x[s] = $3}
    s != "" && /Total cycles:/ {c[s] = $3}
    s == "main" && /Mean depth cycle:/ {d[s] = $4} s == "bf" && /Depth Mean \(try depth\):/ {d[s] = $5}
    END {print c["main"], m["main"] * c["main"], d["main"] * c["main"],
               c["bf"], m["bf"] * c["bf"], d["bf"] * c["bf"], x["main"], x["bf"]}'
}

# CPU nanoseconds slurmctld's threads named NAME have run so far (schedstat's first field,
# summed over the threads of that name), or 0 when there is no slurmctld.
thread_cpu_ns() {
  local pid t n=0 cpu _
  pid=$(nvl_pid_of "$NVL_RUN/run/slurmctld.pid") || { echo 0; return; }
  for t in /proc/"$pid"/task/*; do
    [[ $(cat "$t/comm" 2>/dev/null) == "$1" ]] || continue
    read -r cpu _ <"$t/schedstat" 2>/dev/null || continue
    n=$((n + cpu))
  done
  echo "$n"
}

# Jobs started since `sdiag -r`, from sdiag's counter, which costs slurmctld no lock (a
# squeue of thousands of jobs takes the job read lock from the scheduler it measures). Its
# count of completed jobs is no use: it counts completion RPCs, and a job step that timed
# out waiting for slurmctld's answer and sent again counted twice (2,569 of 2,000 jobs).
# Without --queued, jobs that start at their submission (a free node then) are counted by
# neither sdiag counter (22.05, checked: sdiag -r, one job on an idle cluster: "Jobs
# submitted: 0", "Jobs started: 0"): there the burst's jobs are all submitted before this
# is asked, and the started ones are those no longer pending (squeue of hundreds of jobs).
started() {
  if [[ -z $queued ]]; then
    local pending
    pending=$(squeue -h -t PD -o %i 2>/dev/null | wc -l) || pending=$jobs
    echo $((jobs - pending))
    return
  fi
  { sdiag 2>/dev/null || true; } | awk '/^Jobs started:/ {n = $3} END {print n + 0}'
}

# Waits until every job of the burst started (by sdiag, failing when none started for
# 300 s), then until squeue lists none, asking it once a second. Sets at_last_start to the
# stats within a second of the burst's last start: the cycles that had jobs to test, apart
# from the ones after (an empty queue while the last jobs run, the same for both plugins).
wait_burst() {
  local n last=-1 deadline
  while :; do
    n=$(started)
    ((n >= jobs)) && { at_last_start=$(stats); break; }
    if ((n > last)); then
      last=$n
      deadline=$((SECONDS + 300))
    elif ((SECONDS >= deadline)); then
      nvl_log "no job of the burst started in 300 s ($n of $jobs started)"
      return 1
    fi
    sleep 1
  done
  deadline=$((SECONDS + 300))
  until [[ -z $(squeue -h -o %A) ]]; do
    ((SECONDS < deadline)) || { nvl_log "the burst did not leave the queue in 300 s"; return 1; }
    sleep 1
  done
}

# The plugin's placements in this run's slurmctld log (start.sh starts a fresh log).
# The jobs that started on a placement of nvlplace's: as decided, differing, or relaxed to
# cons_tres's own choice after every node set was refused.
placed() {
  local n=0 event
  for event in placed differs placed-by-cons_tres; do
    n=$((n + $(nvl_placement_log --log "$NVL_RUN/log/slurmctld.log" --count --job '*' \
      "event=$event" || echo 0)))
  done
  echo "$n"
}

declare -A sum
for ((round = 1; round <= rounds; round++)); do
  for select in cons_tres nvlplace; do
    "$here/stop.sh"
    "$here/start.sh" --topology "$topology" --select "$select" >/dev/null
    if [[ -n $queued ]]; then
      scontrol update PartitionName=gpu State=DOWN
      submit_start=$SECONDS
      pids=()
      for ((k = 0; k < submitters; k++)); do burst "$k" "$submitters" & pids+=($!); done
      for pid in "${pids[@]}"; do wait "$pid"; done  # each one's status, under set -e
      queue=$(squeue -h -t PD -o %i | wc -l)
      ((queue == jobs)) || { nvl_log "$queue of $jobs jobs queued"; exit 1; }
      echo "bench: round $round, $select: $jobs jobs queued in $((SECONDS - submit_start)) s" >&2
      sdiag_try -r >/dev/null
      start=$SECONDS
      m0=$(thread_cpu_ns sched_agent) b0=$(thread_cpu_ns bckfl)
      scontrol update PartitionName=gpu State=UP
    else
      sdiag_try -r >/dev/null
      start=$SECONDS
      m0=$(thread_cpu_ns sched_agent) b0=$(thread_cpu_ns bckfl)
      burst 0 1
    fi
    wait_burst
    mcpu=$((($(thread_cpu_ns sched_agent) - m0) / 1000)) bcpu=$((($(thread_cpu_ns bckfl) - b0) / 1000))
    wall=$((SECONDS - start))
    read -r mc mt md bc bt bd mx bx <<<"$(stats)"
    read -r pc pt _ <<<"$at_last_start"
    p=$(placed)
    echo "bench: round $round, $select: $jobs jobs in $wall s; main $mc cycles," \
      "mean $((mc ? ${mt%.*} / mc : 0)) us; backfill $bc cycles," \
      "mean $((bc ? ${bt%.*} / bc : 0)) us; nvlplace placed $p" >&2
    for k in mc mt md bc bt bd pc pt mcpu bcpu; do sum[$select.$k]=$((${sum[$select.$k]:-0} + ${!k%.*})); done
    sum[$select.mx]=$(( ${mx%.*} > ${sum[$select.mx]:-0} ? ${mx%.*} : ${sum[$select.mx]:-0} ))
    sum[$select.bx]=$(( ${bx%.*} > ${sum[$select.bx]:-0} ? ${bx%.*} : ${sum[$select.bx]:-0} ))
    sum[$select.wall]=$((${sum[$select.wall]:-0} + wall))
    sum[$select.placed]=$((${sum[$select.placed]:-0} + p))
  done
done
"$here/stop.sh"

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }'; }
per() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.0f", a / b; else print "n/a" }'; }
row() {  # row LABEL CONS_TRES NVLPLACE
  echo "| $1 | $2 | $3 | $(ratio "$3" "$2") |"
}
c=cons_tres n=nvlplace
echo "| $jobs jobs x $rounds rounds, $(basename "$topology")${queued:+, queued}, $(date -u +%F) | cons_tres | cons_tres_nvlplace | ratio |"
echo "|---|---|---|---|"
row "main scheduler mean cycle (us)" "$(per "${sum[$c.mt]}" "${sum[$c.mc]}")" "$(per "${sum[$n.mt]}" "${sum[$n.mc]}")"
row "main scheduler time per job tested (us)" "$(per "${sum[$c.mt]}" "${sum[$c.md]}")" "$(per "${sum[$n.mt]}" "${sum[$n.md]}")"
row "main scheduler max cycle (us)" "${sum[$c.mx]}" "${sum[$n.mx]}"
echo "| main scheduler cycles | ${sum[$c.mc]} | ${sum[$n.mc]} | |"
row "main scheduler mean cycle until the last job started (us)" "$(per "${sum[$c.pt]}" "${sum[$c.pc]}")" "$(per "${sum[$n.pt]}" "${sum[$n.pc]}")"
echo "| main scheduler cycles until the last job started | ${sum[$c.pc]} | ${sum[$n.pc]} | |"
row "main scheduler mean cycle after it (us)" "$(per $((${sum[$c.mt]} - ${sum[$c.pt]})) $((${sum[$c.mc]} - ${sum[$c.pc]})))" "$(per $((${sum[$n.mt]} - ${sum[$n.pt]})) $((${sum[$n.mc]} - ${sum[$n.pc]})))"
row "main scheduler thread's CPU time per cycle (us)" "$(per "${sum[$c.mcpu]}" "${sum[$c.mc]}")" "$(per "${sum[$n.mcpu]}" "${sum[$n.mc]}")"
row "main scheduler thread's CPU time per job tested (us)" "$(per "${sum[$c.mcpu]}" "${sum[$c.md]}")" "$(per "${sum[$n.mcpu]}" "${sum[$n.md]}")"
row "main scheduler thread's CPU time, all rounds (ms)" "$((${sum[$c.mcpu]} / 1000))" "$((${sum[$n.mcpu]} / 1000))"
row "backfill mean cycle (us)" "$(per "${sum[$c.bt]}" "${sum[$c.bc]}")" "$(per "${sum[$n.bt]}" "${sum[$n.bc]}")"
row "backfill time per job tried (us)" "$(per "${sum[$c.bt]}" "${sum[$c.bd]}")" "$(per "${sum[$n.bt]}" "${sum[$n.bd]}")"
row "backfill max cycle (us)" "${sum[$c.bx]}" "${sum[$n.bx]}"
row "backfill thread's CPU time per job tried (us)" "$(per "${sum[$c.bcpu]}" "${sum[$c.bd]}")" "$(per "${sum[$n.bcpu]}" "${sum[$n.bd]}")"
row "backfill thread's CPU time, all rounds (ms)" "$((${sum[$c.bcpu]} / 1000))" "$((${sum[$n.bcpu]} / 1000))"
echo "| backfill cycles | ${sum[$c.bc]} | ${sum[$n.bc]} | |"
echo "| wall time, all rounds (s) | ${sum[$c.wall]} | ${sum[$n.wall]} | |"
echo "| jobs placed by nvlplace (its log lines) | ${sum[$c.placed]} | ${sum[$n.placed]} | |"
