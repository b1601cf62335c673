#!/bin/bash
# A short demo on the local cluster: the same few jobs, with and without nvlplace options,
# submitted in the same order first under stock select/cons_tres, then under
# select/cons_tres_nvlplace; prints where each landed under both (nodes and GPU indexes from
# `scontrol show job -d`) and the plugin's own log lines.
# Usage: contrib/cluster/demo.sh [--topology FILE]   (default configs/lab-h100.yaml)
# Starts (or restarts) the cluster for each plugin and leaves it running; stop.sh stops it.
set -euo pipefail
usage() { sed -n '2,7p' "$0"; }
topology=
case $#:${1:-} in
  0:) ;;
  1:-h|1:--help) usage; exit 0 ;;
  2:--topology) topology=$2 ;;
  *) echo "demo.sh: unknown arguments: $*" >&2; usage >&2; exit 2 ;;
esac
source "$(dirname "$0")/common.sh"
topology=${topology:-$NVL_ROOT/configs/lab-h100.yaml}
cd /tmp

cancel_all() {
  nvl_cancel_all
  nvl_wait_for 60 "jobs to end" bash -c '[[ -z $(squeue -h -o %A) ]]'
}
settled() {  # running, or waiting for resources (nvlplace's reason or Slurm's); not while
  # it waits behind a higher-priority job, since backfill may still start it
  scontrol show job "$1" | grep -E 'JobState=RUNNING|Reason=Resources' >/dev/null ||
    nvl_placement_log --comment "$(nvl_job_comment "$1")" event=waiting >/dev/null
}

# where JOB TP: "node[2-3]:0-7 node4:0-3", or why it waits; " (splits TP groups)" when one of
# its TP groups, in Slurm's rank order, spans two NVLink domains (`nvlplace check tp-groups`).
where() {
  local id=$1 tp=$2 out split='' rc=0
  out=$(nvl_job_gpus "$id")
  if [[ -z $out ]]; then
    if out=$(nvl_placement_log --comment "$(nvl_job_comment "$id")" event=waiting --field why); then
      echo "waits: $out"
    else
      echo "waits ($(scontrol show job "$id" | sed -n 's/.*Reason=\([^ ]*\).*/\1/p'))"
    fi
    return
  fi
  if ((tp > 1)); then
    # shellcheck disable=SC2086
    "$NVL_CLI" check tp-groups --topology "$topology" --tp "$tp" $out >/dev/null || rc=$?
    ((rc != 1)) || split=" (splits TP groups)"
    ((rc <= 1)) || split=" (nvlplace check tp-groups failed)"
  fi
  echo "$(paste -sd' ' <<<"$out")$split"
}

# The jobs, submitted in this order to each plugin: "label|tp|sbatch arguments".
JOBS=(
  "--gpus=4 (no options)|1|--gpus=4"
  "--gpus=2 (no options)|1|--gpus=2"
  "--gpus=8 --nvl-tp=8|8|--gpus=8 --nvl-tp=8"
  "--gpus=16 --nvl-tp=8|8|--gpus=16 --nvl-tp=8"
  "--gpus=16 --nvl-tp=8 --nvl-max-tier=leaf|8|--gpus=16 --nvl-tp=8 --nvl-max-tier=leaf"
  "-N2 --gpus-per-node=4 --nvl-tp=4|4|-N2 --gpus-per-node=4 --nvl-tp=4"
  "--gpus=8 --nvl-tp=8 (strict)|8|--gpus=8 --nvl-tp=8"
  "--gpus=8 --nvl-tp=8 --nvl=prefer|8|--gpus=8 --nvl-tp=8 --nvl=prefer"
)

declare -A landed
for select in cons_tres nvlplace; do
  "$NVL_ROOT/contrib/cluster/start.sh" --topology "$topology" --select "$select" >/dev/null
  cancel_all
  [[ $select == nvlplace ]] && mark=$(wc -l <"$NVL_RUN/log/slurmctld.log")
  for k in "${!JOBS[@]}"; do
    IFS='|' read -r label tp args <<<"${JOBS[$k]}"
    # A job that can never run on this topology (TP=8 over 4-GPU islands) is refused.
    # shellcheck disable=SC2086
    if ! id=$(sbatch --parsable -o /dev/null $args --wrap 'sleep 3600' 2>/dev/null); then
      landed[$select.$k]="refused by sbatch"
      continue
    fi
    nvl_wait_for 30 "job $id to start or wait" settled "$id" || true
    landed[$select.$k]=$(where "$id" "$tp")
  done
done

echo "== the same jobs, in this order, on $(basename "$topology") (nodes:GPU indexes)"
printf '%-40s | %-34s | %s\n' "job" "stock select/cons_tres" "select/cons_tres_nvlplace"
for k in "${!JOBS[@]}"; do
  IFS='|' read -r label _ <<<"${JOBS[$k]}"
  printf '%-40s | %-34s | %s\n' "$label" "${landed[cons_tres.$k]}" "${landed[nvlplace.$k]}"
done
echo "== the plugin's log (slurmctld.log)"
tail -n +"$((mark + 1))" "$NVL_RUN/log/slurmctld.log" | grep -o 'nvlplace: .*' | cut -c1-220
cancel_all
