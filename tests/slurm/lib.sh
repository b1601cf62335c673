# Helpers for the integration tests on the local Slurm cluster (contrib/cluster). Sourced by
# each test (bash). Every wait polls with a timeout; nothing sleeps to synchronise.
set -uo pipefail
NVL_TEST_NAME=$(basename "$0" .sh)
source "$(dirname "${BASH_SOURCE[0]}")/../../contrib/cluster/common.sh"
NVL_WAIT_NOTE=10  # a wait of 10 s or more is named in the test's output
NVL_CTLD_LOG=$NVL_RUN/log/slurmctld.log
NVL_TOPOLOGY=${NVLPLACE_TEST_TOPOLOGY:-$NVL_ROOT/configs/lab-islands.yaml}
# Slurm's own topology plugin on the cluster: tree (the switches) or block (a block per
# NVLink domain; tests/slurm/block.sh).
NVL_SLURM_TOPOLOGY=tree
cd /tmp || exit 1  # jobs write slurm-*.out in their working directory

# What a test keeps after its cluster is removed (reports, failed logs): one folder per
# cluster, so that the runs on each Slurm release stay apart.
NVL_TEST_OUT=$NVL_BUILD/tests/slurm/out-$(basename "$NVL_RUN")

fail() {
  echo "FAIL $NVL_TEST_NAME: $*" >&2
  if [[ -f $NVL_CTLD_LOG ]]; then
    # The run directory goes with the cluster: keep the log in the build tree.
    mkdir -p "$NVL_TEST_OUT/failed/$NVL_TEST_NAME-logs"
    cp "$NVL_CTLD_LOG" "$NVL_TEST_OUT/failed/$NVL_TEST_NAME-slurmctld.log"
    cp "$NVL_RUN"/log/*.log "$NVL_TEST_OUT/failed/$NVL_TEST_NAME-logs/" 2>/dev/null
    echo "--- last lines of $NVL_CTLD_LOG (all of it in $NVL_TEST_OUT/failed):" >&2
    tail -n 25 "$NVL_CTLD_LOG" >&2
  fi
  exit 1
}
note() { echo "$NVL_TEST_NAME: $*"; }
skip() {
  echo "SKIP $NVL_TEST_NAME: $*"
  exit 77
}

# Skips (ctest SKIP_RETURN_CODE 77) where the cluster cannot run.
require_cluster_tools() {
  [[ $(id -u) -eq 0 ]] || skip "needs root (several slurmd on one host)"
  [[ -x $NVL_SBIN/slurmctld && -x $NVL_SBIN/slurmd ]] && command -v munged >/dev/null ||
    skip "slurmctld and slurmd (in $NVL_SBIN) or munged not installed (contrib/setup.sh)"
  [[ -f $NVL_PLUGIN_LIB/select_cons_tres_nvlplace.so ]] || skip "plugin not built"
  [[ -x $NVL_CLI ]] || skip "nvlplace CLI not built"
}

# use_cluster nvlplace|cons_tres [backfill|builtin [START_OPTIONS...]]: the cluster with that
# select plugin (and scheduler, default backfill; more options of contrib/cluster/start.sh,
# such as --preempt), started or restarted if needed.
use_cluster() {
  require_cluster_tools
  "$NVL_ROOT/contrib/cluster/start.sh" --topology "$NVL_TOPOLOGY" --select "$1" \
    --scheduler "${2:-backfill}" --slurm-topology "$NVL_SLURM_TOPOLOGY" "${@:3}" >/dev/null ||
    fail "cannot start the cluster with $* (see $NVL_RUN/log)"
  # A test that failed half-way may have left a broken nvlplace.yaml behind: every test
  # starts from the cluster's own configuration, so one failure does not fail the next.
  if [[ $1 == nvlplace && $(grep -v '^#' "$NVL_RUN/etc/nvlplace.yaml" 2>/dev/null) != "$(good_config_text)" ]]; then
    local mark
    mark=$(log_mark)
    good_nvlplace_yaml
    nvl_wait_for 20 "the configuration to load" log_has "$mark" "nvlplace: loaded" ||
      fail "the cluster's own nvlplace.yaml did not load"
  fi
}

no_jobs_left() { [[ -z $(squeue -h -o %A 2>/dev/null) ]]; }

# Cancels every job and waits until all nodes are idle again.
reset_jobs() {
  nvl_cancel_all
  nvl_wait_for 60 "all jobs to end" no_jobs_left || fail "jobs did not end"
  nvl_wait_for 30 "nodes to be idle" nvl_all_nodes_idle || fail "nodes did not become idle"
}

nvl_all_nodes_idle() {
  [[ -z $(sinfo -h -N -o '%t' | grep -v '^idle~\?$') ]]
}

# submit SBATCH_ARGS...: a job that sleeps until cancelled; prints its id.
submit() {
  local id
  id=$(sbatch --parsable -o /dev/null "$@" --wrap 'sleep 3600') || fail "sbatch $* refused"
  echo "${id%%;*}"
}

job_reason() { scontrol show job "$1" 2>/dev/null | sed -n 's/.*Reason=\([^ ]*\).*/\1/p'; }
is_reason() { [[ $(job_reason "$1") == "$2" ]]; }
job_state() { scontrol show job "$1" 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p'; }
is_state() { [[ $(job_state "$1") == "$2" ]]; }

# wait_state JOB STATE [SECONDS]
wait_state() {
  nvl_wait_for "${3:-30}" "job $1 to be $2" is_state "$1" "$2" ||
    fail "job $1 is $(job_state "$1"), not $2: $(scontrol show job "$1" | grep -E 'Reason|SystemComment')"
}


# start_of JOB: the start time backfill plans for a pending job (squeue --start); has_start
# JOB: it has one.
start_of() { squeue --start -h -j "$1" -o %S 2>/dev/null; }
has_start() { [[ $(start_of "$1") =~ ^[0-9]{4}- ]]; }

# job_gone JOB: no longer in the queue (ended and done completing: its GPUs are free again).
job_gone() { [[ -z $(squeue -h -j "$1" -o %A 2>/dev/null) ]]; }
# cancel_job JOB: cancels it and waits until it has left the queue.
cancel_job() {
  scancel "$1"
  nvl_wait_for 30 "job $1 to end" job_gone "$1" || fail "job $1 did not end"
}

job_field() { scontrol show job "$1" | tr ' ' '\n' | sed -n "s/^$2=//p" | head -1; }
job_comment() { nvl_job_comment "$1"; }

# True when the job's GPUs on each node lie in one NVLink domain (island) of the topology:
# $1 holds NODES:INDEXES words, as nvl_job_gpus prints them.
gpus_in_one_island() {
  local out
  # shellcheck disable=SC2086
  out=$("$NVL_CLI" check span --per-node --topology "$NVL_TOPOLOGY" $1 2>&1) ||
    fail "nvlplace check span failed on [$1]: $out"
  ! grep -v ' nvlink_domains=1$' <<<"$out" >/dev/null
}

# placed_in_one_island JOB TP: the running strict job's GPUs, as Slurm allocated them
# (`scontrol show job -d`), lie in one NVLink island, and its SystemComment says it was
# placed there as decided (gpus= and slurm_gpus= both those GPUs). Sets `mine` to them.
placed_in_one_island() {
  mine=$(nvl_job_gpus "$1")
  gpus_in_one_island "$mine" || fail "the TP=$2 strict job $1 split over islands: $mine"
  comment_has "$1" event=placed "tp=$2" nvl=strict span_domains=1 "gpus=$mine" "slurm_gpus=$mine" ||
    fail "job $1 runs on $mine; its SystemComment says: $(job_comment "$1")"
}

# tp_groups_split TP JOB: prints the job's TP groups (Slurm's rank order) and the NVLink
# domains each spans, as `nvlplace check tp-groups` says; true when a group spans two.
tp_groups_split() {
  local out rc
  # shellcheck disable=SC2046
  out=$("$NVL_CLI" check tp-groups --topology "$NVL_TOPOLOGY" --tp "$1" $(nvl_job_gpus "$2"))
  rc=$?
  echo "$out"
  [[ $rc -eq 1 ]] || { [[ $rc -eq 0 ]] || fail "nvlplace check failed for job $2: $out"; return 1; }
}

# Lines of slurmctld's log written after this call's mark (log_mark then log_since).
log_mark() { wc -l <"$NVL_CTLD_LOG"; }
log_since() { tail -n +"$(($1 + 1))" "$NVL_CTLD_LOG"; }
# grep reads to the end (no -q): under pipefail an early `grep -q` exit makes tail die of
# SIGPIPE while it still writes, and the pipeline then fails although the line is there.
log_has() { log_since "$1" | grep -- "$2" >/dev/null; }

# past_second T: the clock has passed second T (date +%s), so a check the plugin makes at most
# once a second is made again at its next decision.
clock_after() { (($(date +%s) > $1)); }
past_second() {
  nvl_wait_for 5 "the clock to pass second $1" clock_after "$1" || fail "the clock stands"
}

# one_error_since MARK PATTERN: one bad file, one error: exactly one "error: nvlplace: " line
# logged since MARK, and it matches PATTERN (grep's basic regex: its file:line and what stays
# in force); else the test fails with the lines found.
one_error_since() {
  local lines count
  lines=$(log_since "$1" | grep "error: nvlplace: ")
  count=$(grep -c . <<<"$lines")
  [[ $count -eq 1 ]] || fail "$count error lines for one bad file: $lines"
  grep -- "$2" <<<"$lines" >/dev/null ||
    fail "the error lacks the file:line or what stays in force: $lines"
}

# The plugin's placement lines (nvl_placement_log; conditions KEY=VALUE, or KEY~TEXT: the
# field holds TEXT). log_line_has MARK JOB CONDITION...: a line of JOB ("*": of any job; "":
# any line, also job_submit's, which names no job) logged since MARK meets every condition.
log_line_has() {
  local mark=$1 job=$2
  shift 2
  log_since "$mark" | nvl_placement_log --log - ${job:+--job "$job"} "$@" >/dev/null
}
# comment_has JOB CONDITION...: the job's SystemComment is a placement line that meets them.
comment_has() {
  local job=$1
  shift
  nvl_placement_log --comment "$(job_comment "$job")" "$@" >/dev/null
}

# burst_summary REPORT OUTPUT: one line of a burst's report (contrib/cluster/burst.py
# --report), or the end of its OUTPUT when it wrote none.
burst_summary() {
  local line
  line=$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
print("%(jobs_submitted)d jobs, %(jobs_started)d started, %(placed_by_nvlplace)d placed by "
      "nvlplace: %(allocation_equals_decision)d as decided, %(differences_named)d named "
      "differences, %(silent_difference_count)d silent; %(strict_jobs_checked)d strict jobs, "
      "%(strict_split_count)d split; %(double_allocation_count)d GPUs held twice in %(samples)d "
      "samples; %(unaccounted_count)d arrays unaccounted; states %(final_states)s; "
      "faults %(faults)s; %(wall_seconds)s s" % d
      + "".join("; slurmd on %(node)s died: %(cause)s" % x for x in d.get("slurmd_deaths", [])))' \
    "$1" 2>&1) || line="no report: $(tail -5 "$2")"
  echo "$line"
}

# Writes nvlplace.yaml and makes slurmctld read it again.
write_nvlplace_yaml() {
  printf '%s\n' "$1" >"$NVL_RUN/etc/nvlplace.yaml"
  nvl_reconfigure || fail "scontrol reconfigure failed"
}

# The cluster's own nvlplace.yaml (as start.sh writes it, without its comment line).
good_config_text() {
  printf '%s\n' "topology: $NVL_TOPOLOGY" "policy: topo" "log_level: info" "candidates: 3"
  [[ $NVL_SLURM_TOPOLOGY == tree ]] || echo "slurm_blocks: true"
}
good_nvlplace_yaml() { write_nvlplace_yaml "$(good_config_text)"; }

# The busy pattern of the TP tests: node00 keeps GPUs 0,1 and 4,5 busy, so its 4 free GPUs
# are split 2 + 2 over its two islands; every other node is free. Prints the holders.
make_split_pattern() {
  local a b c
  a=$(submit -w node00 --gres=gpu:2)
  b=$(submit -w node00 --gres=gpu:2)
  wait_state "$a" RUNNING
  wait_state "$b" RUNNING
  c=$(submit -w node00 --gres=gpu:2)
  wait_state "$c" RUNNING
  [[ $(nvl_job_gpus "$a") == node00:0-1 && $(nvl_job_gpus "$b") == node00:2-3 &&
     $(nvl_job_gpus "$c") == node00:4-5 ]] ||
    fail "unexpected holder GPUs: $(nvl_job_gpus "$a") $(nvl_job_gpus "$b") $(nvl_job_gpus "$c")"
  scancel "$b"
  wait_state "$b" CANCELLED
  echo "$a $c"
}
