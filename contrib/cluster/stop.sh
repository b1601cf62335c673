#!/bin/bash
# Stops the local Slurm cluster started by start.sh: cancels its jobs, stops every slurmd,
# slurmctld, slurmdbd, MariaDB and munged by the pids in its run directory, and any
# slurmstepd of it left behind. Idempotent; keeps the run directory (clean.sh removes it).
# Usage: contrib/cluster/stop.sh (the cluster of NVLPLACE_CLUSTER_DIR, see common.sh)
set -uo pipefail
case $#:${1:-} in
  0:) ;;
  1:-h|1:--help) sed -n '2,5p' "$0"; exit 0 ;;
  *) echo "stop.sh: takes no arguments: $*" >&2; sed -n '2,5p' "$0" >&2; exit 2 ;;
esac
source "$(dirname "$0")/common.sh"

[[ -d $NVL_RUN/run ]] || exit 0

# Each phase's seconds, named in one line when the stop took long (6 s is usual for 16
# nodes; a 26.05 stop after the bursts once took 15 s and no log said where).
phases=() mark=$SECONDS
phase_done() {
  phases+=("$1 $((SECONDS - mark)) s")
  mark=$SECONDS
}

# Jobs first, so that no job step outlives its slurmd.
if nvl_pid_of "$NVL_RUN/run/slurmctld.pid" >/dev/null && nvl_ctld_up; then
  if [[ -n $(squeue -h -o %i 2>/dev/null) ]]; then
    nvl_cancel_all 2>/dev/null
    nvl_wait_for 30 "jobs to end" bash -c '[[ -z $(squeue -h -t R,CG,S,CF -o %A) ]]' || true
  fi
fi
phase_done jobs

# 64 slurmd at a time: one after the other took 68 s for 1,024; all at once, each exit
# (about 30 ms of CPU) shares the CPU with a thousand others and none ends for 20 s or more.
# Again while any is left: a slurmd re-executing itself (a reconfigure just before) forks
# its successor while the first round stops it.
rounds=0
for round in 1 2 3; do
  mapfile -t pids < <(nvl_slurmd_pids)
  ((${#pids[@]})) || break
  rounds=$round
  ((round == 1)) || nvl_log "stopping ${#pids[@]} slurmd started while the others stopped"
  for ((i = 0; i < ${#pids[@]}; i += 64)); do
    nvl_stop_pids slurmd "${pids[@]:i:64}"
  done
done
rm -f "$NVL_RUN"/run/slurmd-*.pid
phase_done "slurmd in $rounds rounds"
ctld_log=$NVL_RUN/log/slurmctld.log
ctld_lines=$(wc -l 2>/dev/null <"$ctld_log" || echo 0)
nvl_stop_slurmctld
# What a slow slurmctld did after the signal (its log goes with clean.sh).
if ((SECONDS - mark >= 5)); then
  nvl_log "slurmctld took $((SECONDS - mark)) s to exit; its log since the stop:"
  tail -n +"$((ctld_lines + 1))" "$ctld_log" 2>/dev/null | tail -n 20 >&2
fi
phase_done slurmctld
nvl_stop_backup
nvl_backup_net_down
phase_done backup
for pid in $(nvl_stray_stepds); do
  nvl_log "stopping stray slurmstepd $pid"
  for child in $(ps -o pid= --ppid "$pid"); do kill -KILL "$child" 2>/dev/null; done
  nvl_stop_pid "$pid" slurmstepd
done
phase_done slurmstepd
nvl_stop_accounting
phase_done accounting
if pid=$(nvl_pid_of "$NVL_RUN/run/munged.pid"); then nvl_stop_pid "$pid" munged; fi
phase_done munged
printf -v took '%s, ' "${phases[@]}"
((SECONDS < 10)) || nvl_log "stop took $SECONDS s: ${took%, }"
rm -f "$NVL_RUN/run/slurmctld.pid" "$NVL_RUN/run/munged.pid" "$NVL_RUN/settings"
exit 0
