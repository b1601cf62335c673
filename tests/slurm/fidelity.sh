#!/bin/bash
# The replay predicts the plugin: tests/fixtures/traces/fidelity.csv is replayed offline
# (policy topo, FIFO) on lab-islands, then the same jobs are submitted in the same order to
# the real cluster with select/cons_tres_nvlplace (each once the one before has started or
# is waiting). A job whose recorded run ends before the next submit time in the trace is
# cancelled on the cluster at that point (and waited for), so both see the same frees. The
# jobs, their requests and the times come from the replay's own jobs.csv, not the trace.
# Every job must end the same way in both (started at its submit time, waiting, or refused
# as never placeable) and every started job must hold the same nodes and GPU indexes.
# Three traces: fidelity.csv fills an empty cluster; fidelity-loaded.csv first leaves every
# node partly busy (16 jobs of 6 GPUs, each leaving a pair in one island), then places jobs
# that must span partly free nodes (where cons_tres, not the engine, used to choose the
# per-node counts) and frees islands on the way. fidelity-backfill.csv is replayed with EASY backfill and run with time limits
# (the trace's durations in minutes): a strict TP=4 head waits for the island a short job
# frees (the plugin's WILL_RUN estimate, which the replay reserves with too); a later long
# job that fits only on the reserved node waits; a short one starts there before the
# reservation; a long one starts at once on another node. Both must start and hold the same
# jobs, the backfilled ones included.
source "$(dirname "$0")/lib.sh"
use_cluster nvlplace
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# replay_and_run TRACE MIN_STARTED MIN_ENDED [SCHEDULER [MIN_BACKFILLED]]
replay_and_run() {
trace=$1
scheduler=${4:-fifo}
reset_jobs
rm -rf "${out:?}"/*
"$NVL_CLI" replay --topology "$NVL_TOPOLOGY" --trace "$trace" --policies topo \
  --scheduler "$scheduler" --out "$out" >"$out/replay.log" 2>&1 || fail "replay failed: $(cat "$out/replay.log")"

# The replay's jobs in trace order, from its jobs.csv: "id submit end status gpus tp pp dp
# nvl words...". status is started (at its submit time), waits (started later, or never) or
# rejected; end is when the replay ends a started job; tp, pp, dp 0 when not given; words
# are the GPUs of a started job as NODES:INDEXES words.
# minutes is the job's time limit under backfill (its duration in the trace, rounded up to
# whole minutes, as Slurm's -t takes it), 0 under FIFO (no limit).
jobs=$(python3 - "$out/jobs.csv" "$trace" "$scheduler" <<'PY'
import csv, math, sys
minutes = {}
if sys.argv[3] == "backfill":
    minutes = {r["id"]: math.ceil(float(r["duration"]) / 60) for r in csv.DictReader(open(sys.argv[2]))}
for r in csv.DictReader(open(sys.argv[1])):
    status, words = r["status"], []
    if status != "rejected" and (status != "started" or float(r["wait"]) > 0.5):
        status = "waits"
    if status == "started":  # gpus_by_node: "node04:0 1 2 3;node05:0 1"
        words = [w.replace(" ", ",") for w in r["gpus_by_node"].split(";")]
    print(r["id"], r["submit"], r["end"], status, minutes.get(r["id"], 0), r["gpus"], r["tp"],
          r["pp"], r["dp"], r["nvl"], *words)
PY
) || fail "cannot read $out/jobs.csv"
[[ $(wc -l <<<"$jobs") -eq $(($(wc -l <"$trace") - 1)) ]] || fail "replay lost jobs: $jobs"

settled() { is_state "$1" RUNNING || comment_has "$1" event=waiting; }
# A job without a hard constraint that waits has no reason of nvlplace's: it has settled once
# two backfill cycles ran after its submission and it still pends.
bf_cycles() { sdiag | awk '/^Backfilling stats/ {s = 1} s && /Total cycles:/ {print $3; exit}'; }
# Backfill starts a cycle only when a job, node, partition or reservation changed since its
# last one (backfill.c _more_work): once one cycle ended after the submission, a harmless
# update of the job (its user comment) makes sure the next one runs. Without it the second
# cycle came only from some unrelated change, and under load none came (CI, 2026-11-26).
poked_at=
settled_or_passed_over() {
  settled "$1" && return 0
  local now
  now=$(bf_cycles)
  ((now >= $2 + 2)) && return 0
  if ((now >= $2 + 1)) && [[ $poked_at != "$1.$now" ]]; then
    scontrol update jobid="$1" comment="fidelity-$now" >/dev/null 2>&1 || true
    poked_at=$1.$now
  fi
  return 1
}

# Ends, in end order, every started job the replay ends by time $1.
running_end=() running_job=()
end_jobs_by() {
  local t=$1 id
  for id in $(for k in "${!running_end[@]}"; do echo "${running_end[$k]} $k"; done | sort -g |
    awk -v t="$t" '$1 <= t {print $2}'); do
    scancel "${running_job[$id]}"
    nvl_wait_for 30 "job ${running_job[$id]} ($id) to end" job_gone "${running_job[$id]}" ||
      fail "$id did not end"
    note "$id: ended at ${running_end[$id]}"
    unset "running_end[$id]" "running_job[$id]"
  done
}

started=0 ended=0 backfilled=0
while read -r id submit end want_status minutes gpus tp pp dp nvl words <&3; do
  before=${#running_end[@]}
  end_jobs_by "$submit"
  ended=$((ended + before - ${#running_end[@]}))
  args=(--gpus="$gpus")
  ((tp > 0)) && args+=(--nvl-tp="$tp")
  ((pp > 0)) && args+=(--nvl-pp="$pp")
  ((dp > 0)) && args+=(--nvl-dp="$dp")
  # strict is the plugin's default here (start.sh's nvlplace.yaml sets no default_nvl).
  [[ $nvl == strict ]] || args+=(--nvl="$nvl")
  ((minutes > 0)) && args+=(-t "$minutes")
  if [[ $want_status == rejected ]]; then
    if sbatch -o /dev/null "${args[@]}" --wrap true >/dev/null 2>&1; then
      fail "$id: the replay rejects it as never placeable, Slurm accepted it"
    fi
    note "$id: refused in both"
    continue
  fi
  cycles=$(bf_cycles)
  job=$(submit "${args[@]}")
  if [[ $scheduler == backfill && $want_status == waits ]]; then
    [[ $cycles =~ ^[0-9]+$ ]] || fail "sdiag gave no backfill cycle count: $(sdiag 2>&1 | head -3)"
    nvl_wait_for 30 "job $job ($id) to wait through two backfill cycles" \
      settled_or_passed_over "$job" "$cycles" ||
      fail "$id (job $job): backfill did not run: $(scontrol show job "$job" | grep -E 'JobState|SystemComment')"
  else
    nvl_wait_for 30 "job $job ($id) to start or wait" settled "$job" ||
      fail "$id (job $job) neither started nor waits: $(scontrol show job "$job" | grep -E 'JobState|SystemComment')"
  fi
  state=$(job_state "$job")
  if [[ $want_status == started ]]; then
    # shellcheck disable=SC2086
    want_gpus=$("$NVL_CLI" check gpus $words | sort | paste -sd' ')
    [[ $state == RUNNING ]] || fail "$id: the replay starts it on $want_gpus, Slurm has it $state: $(job_comment "$job")"
    got=$(nvl_job_gpu_list "$job" | paste -sd' ')
    [[ -n $got && $got == "$want_gpus" ]] || fail "$id: replay placed it on [$want_gpus], Slurm on [$got]"
    started=$((started + 1))
    # Started by sched/backfill, past a job that waits: what backfill decided, not FIFO.
    if [[ $scheduler == backfill && -n $waiting_before ]]; then
      backfilled=$((backfilled + 1))
    fi
    running_end[$id]=$end
    running_job[$id]=$job
    note "$id: same placement: $(nvl_job_gpus "$job" | paste -sd' ')"
  else
    [[ $state == PENDING ]] || fail "$id: the replay has it $want_status, Slurm has it $state on $(nvl_job_gpus "$job")"
    note "$id: waits in both: $(job_comment "$job")"
    waiting_before+=" $job"
  fi
done 3<<<"$jobs"
((started >= $2 && ended >= $3 && backfilled >= ${5:-0})) ||
  fail "$(basename "$trace"): only $started jobs started ($backfilled past a waiting one) and $ended ended: the trace no longer tests much"
note "$(basename "$trace"): $started placements identical ($backfilled past a waiting job), $ended jobs ended on the way"
}

declare -A running_end running_job
waiting_before=
replay_and_run "$NVL_ROOT/tests/fixtures/traces/fidelity.csv" 12 3
replay_and_run "$NVL_ROOT/tests/fixtures/traces/fidelity-loaded.csv" 23 2
waiting_before=
replay_and_run "$NVL_ROOT/tests/fixtures/traces/fidelity-backfill.csv" 19 0 backfill 2
reset_jobs
note "ok"
