#!/bin/bash
# A short demo on the local cluster: a few jobs with and without nvlplace options, and where
# each landed (nodes and GPU indexes from `scontrol show job -d`, and the plugin's own line).
#   contrib/cluster/demo.sh [--topology FILE]   (default configs/lab-h100.yaml)
# Starts the cluster if needed (start.sh) and leaves it running; stop.sh stops it.
set -euo pipefail
source "$(dirname "$0")/common.sh"
topology=$NVL_ROOT/configs/lab-h100.yaml
[[ ${1:-} == --topology ]] && topology=$2
"$(dirname "$0")/start.sh" --topology "$topology" --select nvlplace
cd /tmp

cancel_all() {
  local jobs
  jobs=$(squeue -h -o %A)
  # shellcheck disable=SC2086
  [[ -z $jobs ]] || scancel $jobs
  nvl_wait_for 60 "jobs to end" bash -c '[[ -z $(squeue -h -o %A) ]]'
}
settled() {  # running, or waiting with a reason from nvlplace
  scontrol show job "$1" | grep -qE 'JobState=RUNNING|SystemComment=nvlplace: waiting'
}

# run LABEL SBATCH_ARGS...: submits a job that holds its GPUs, then shows where it landed.
run() {
  local label=$1 id where
  shift
  id=$(sbatch --parsable -o /dev/null "$@" --wrap 'sleep 3600')
  nvl_wait_for 30 "job $id to start or wait" settled "$id" || true
  where=$(scontrol show job -d "$id" | sed -n 's/^ *Nodes=\([^ ]*\) .*IDX:\([^)]*\)).*/\1:\2/p' | paste -sd' ')
  [[ -n $where ]] || where="waits: $(scontrol show job "$id" | sed -n 's/^ *SystemComment=nvlplace: waiting: //p')"
  printf '%-42s job %-3s %s\n' "$label" "$id" "$where"
}

cancel_all
mark=$(wc -l <"$NVL_RUN/log/slurmctld.log")
echo "== jobs on $(basename "$topology") with select/cons_tres_nvlplace (nodes:GPU indexes)"
run "--gpus=4 (no options)" --gpus=4
run "--gpus=2 (no options)" --gpus=2
run "--gpus=8 --nvl-tp=8" --gpus=8 --nvl-tp=8
run "--gpus=16 --nvl-tp=8" --gpus=16 --nvl-tp=8
run "--gpus=16 --nvl-tp=8 --nvl-max-tier=leaf" --gpus=16 --nvl-tp=8 --nvl-max-tier=leaf
run "-N2 --gpus-per-node=4 --nvl-tp=4" -N2 --gpus-per-node=4 --nvl-tp=4
run "--gpus=8 --nvl-tp=8 (strict)" --gpus=8 --nvl-tp=8
run "--gpus=8 --nvl-tp=8 --nvl=prefer" --gpus=8 --nvl-tp=8 --nvl=prefer
echo "== the plugin's log (slurmctld.log)"
tail -n +"$((mark + 1))" "$NVL_RUN/log/slurmctld.log" | grep -o 'nvlplace: .*' | cut -c1-220
cancel_all
