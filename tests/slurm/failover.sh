#!/bin/bash
# A backup slurmctld takes over mid-burst (issue 26, point 3): a cluster of its own with two
# SlurmctldHost lines (contrib/cluster/start.sh --backup: the backup in network, UTS and
# mount namespaces of its own on this machine, sharing the state directory), a burst of short
# mixed jobs (contrib/cluster/burst.py --failover) during which the primary is killed with
# SIGKILL, the backup takes over with the plugin loaded, and the primary is started again and
# takes back control (after 22.05 once the backup was stopped: Slurm's own live hand-back
# there can lose the state, burst.py's take_back says why). Nothing is lost, no
# GPU is held twice, every job the plugin placed ran as decided (the backup's placement
# lines go to the same log), no strict TP group is split; the plugin on the backup rebuilt
# its view of held GPUs from the job records (its log says so) before it placed a job.
source "$(dirname "$0")/lib.sh"
require_cluster_tools
command -v ip >/dev/null && command -v unshare >/dev/null ||
  skip "needs ip (iproute2) and unshare for the backup controller's namespaces"
trap '"$NVL_ROOT/contrib/cluster/clean.sh" >/dev/null 2>&1' EXIT
"$NVL_ROOT/contrib/cluster/start.sh" --topology "$NVL_TOPOLOGY" --select nvlplace --backup \
  >/dev/null || fail "cannot start the cluster with a backup controller (see $NVL_RUN/log)"
nvl_backup_up || fail "the backup controller does not answer: $(scontrol ping 2>&1)"
mkdir -p "$NVL_TEST_OUT"
report=$NVL_TEST_OUT/failover-burst.json
mark=$(log_mark)
python3 "$NVL_ROOT/contrib/cluster/burst.py" --jobs "${NVLPLACE_FAILOVER_JOBS:-300}" --failover \
  --report "$report" >"$NVL_TEST_OUT/failover-burst.out" 2>&1
rc=$?
summary=$(burst_summary "$report" "$NVL_TEST_OUT/failover-burst.out")
note "$summary"
[[ $rc -eq 0 ]] || fail "the burst's checks failed ($rc): $(tail -30 "$NVL_TEST_OUT/failover-burst.out")"
# The backup ran with the plugin and placed jobs, the primary took back control.
log_has "$mark" "BackupController1 $NVL_BK_NAME taking over" || fail "no takeover in the log"
# Between the takeover and the primary's start: the backup's own lines.
backup_lines=$(log_since "$mark" | sed -n '/taking over/,/started on cluster/p')
placed=$(grep -c " event=placed " <<<"$backup_lines")
((placed > 0)) || fail "the backup placed no job"
note "the backup placed $placed jobs"
scontrol ping | grep -q "(primary) at .* is UP" || fail "the primary is not back: $(scontrol ping)"
# The backup went back to standby (22.05: in the same process; later releases: started again
# after it was stopped for the take-back).
nvl_wait_for 30 "the backup controller to be back in standby" nvl_backup_up ||
  fail "the backup is not back in standby: $(scontrol ping 2>&1)"
squeue -h >/dev/null || fail "no controller in control after the burst: $(scontrol ping)"
note "ok"
