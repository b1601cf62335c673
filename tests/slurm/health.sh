#!/bin/bash
# The NVLink health file in a running slurmctld (issue 25, point 3): a change is seen at the
# next decision, without `scontrol reconfigure`. On two racks of 9 trays (one spare each), a
# rack split by an NVSwitch failure is two NVLink domains: a strict TP group of 8 trays waits
# where it ran before the split, one of 4 trays runs inside one partition; the rack whole
# again, the waiting job starts there. A bad health file is a bad configuration: one error
# naming the file and line, and the last good configuration stays in force.
source "$(dirname "$0")/lib.sh"
NVL_TOPOLOGY=$NVL_ROOT/tests/fixtures/cluster/nvl-2racks.yaml
use_cluster nvlplace
reset_jobs
health=$NVL_RUN/etc/nvlink-health.yaml
: >"$health"
mark=$(log_mark)
write_nvlplace_yaml "$(good_config_text)
nvlink_health: $health"
nvl_wait_for 20 "the configuration with the health file to load" \
  log_has "$mark" "nvlplace: loaded .*NVLink health from $health: all NVLink healthy" ||
  fail "no load line naming the health file: $(log_since "$mark" | grep nvlplace)"

# loaded_after MARK TEXT: asks slurmctld for a decision (a test-only submit; the plugin looks
# at the health file at most once a second, when it decides) and is true once the log has
# TEXT after MARK.
loaded_after() {
  sbatch --test-only -o /dev/null --gpus=4 --wrap=true >/dev/null 2>&1
  log_has "$1" "$2"
}
# write_health TEXT WHAT: the health file becomes TEXT, and the plugin has read it (the log
# says WHAT after the change).
write_health() {
  local m
  m=$(log_mark)
  printf '%s\n' "$1" >"$health"
  nvl_wait_for 30 "the plugin to read the health file ($2)" loaded_after "$m" "$2" ||
    fail "the changed health file was not read: $(log_since "$m" | grep nvlplace)"
}
# parts_of JOB: the NVLink partitions of rack0 split as node[00-03] / node[04-08] (rack1 is
# whole) that the job's nodes are in, one per line.
parts_of() {
  local n
  for n in $("$NVL_CLI" check hostlist --expand "$(job_field "$1" NodeList)"); do
    n=$((10#${n#node}))
    if ((n <= 3)); then echo rack0/p1; elif ((n <= 8)); then echo rack0/p2; else echo rack1; fi
  done | sort -u
}

# rack1: two trays busy, so it has 7 free, one of them its spare: a TP group of 8 trays (32
# GPUs) fits rack0 only.
h1=$(submit -w node09 --gpus-per-node=4)
h2=$(submit -w node10 --gpus-per-node=4)
wait_state "$h1" RUNNING
wait_state "$h2" RUNNING

a=$(submit --gpus=32 --nvl-tp=32 --nvl=strict)
wait_state "$a" RUNNING
[[ $(parts_of "$a") == $'rack0/p1\nrack0/p2' ]] ||
  fail "job $a (TP=32, healthy racks) is not on both halves of rack0: $(job_field "$a" NodeList)"
cancel_job "$a"

# NVSwitch failure: rack0 is two partitions of 4 and 5 trays.
write_health 'splits:
  - {domain: rack0, partitions: ["node[00-03]", "node[04-08]"]}' \
  "NVLink health from $health: rack0 split into 2 NVLink partitions (4 + 5 nodes)"
b=$(submit --gpus=32 --nvl-tp=32 --nvl=strict)
nvl_wait_for 30 "job $b to wait" comment_has "$b" event=waiting ||
  fail "job $b (TP=32, rack0 split): $(scontrol show job "$b" | grep -E 'JobState|SystemComment')"
is_state "$b" PENDING || fail "job $b ran over the split rack: $(job_field "$b" NodeList)"
c=$(submit --gpus=16 --nvl-tp=16 --nvl=strict)
wait_state "$c" RUNNING
[[ $(parts_of "$c" | wc -l) -eq 1 ]] ||
  fail "job $c's TP group of 16 GPUs spans a broken partition: $(job_field "$c" NodeList)"
note "rack0 split: TP=32 waits, TP=16 on $(job_field "$c" NodeList) ($(parts_of "$c"))"
cancel_job "$c"

# The rack repaired: the waiting job starts there, no reconfigure.
write_health '' "NVLink health from $health: all NVLink healthy"
wait_state "$b" RUNNING
[[ $(parts_of "$b") == $'rack0/p1\nrack0/p2' ]] ||
  fail "job $b (TP=32, rack0 repaired) is not on rack0: $(job_field "$b" NodeList)"
cancel_job "$b"

# A bad health file: one error with its file and line; the healthy view stays in force.
m=$(log_mark)
write_health 'splits:
  - {domain: rack7, partitions: ["node[00-03]"]}' "error: nvlplace: "
one_error_since "$m" "error: nvlplace: .*$health:2:.*rack7.* stays in force until this is fixed and the NVLink health file changes again"
# The plugin looks at the file at most once a second: d is decided in a later second, so it
# looks again (and would load again, a second error, had the failed load not counted).
past_second "$(date +%s)"
d=$(submit --gpus=32 --nvl-tp=32 --nvl=strict)
wait_state "$d" RUNNING
[[ $(parts_of "$d") == $'rack0/p1\nrack0/p2' ]] ||
  fail "job $d (TP=32, last good: healthy) is not on rack0: $(job_field "$d" NodeList)"
# d's submit and placement saw the same bad file: no second error.
one_error_since "$m" "$health:2:"
nvl_ctld_up || fail "slurmctld stopped answering"

reset_jobs
good_nvlplace_yaml
