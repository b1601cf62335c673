#!/bin/bash
# Stops the local Slurm cluster (stop.sh) and removes its run directory. Idempotent.
# Usage: contrib/cluster/clean.sh (the cluster of NVLPLACE_CLUSTER_DIR, see common.sh)
set -euo pipefail
case $#:${1:-} in
  0:) ;;
  1:-h|1:--help) sed -n '2,3p' "$0"; exit 0 ;;
  *) echo "clean.sh: takes no arguments: $*" >&2; sed -n '2,3p' "$0" >&2; exit 2 ;;
esac
source "$(dirname "$0")/common.sh"

"$(dirname "$0")/stop.sh"
if [[ -d $NVL_RUN ]]; then
  # Only a directory that start.sh made: never a path given by mistake.
  if [[ ! -f $NVL_RUN/env.sh && -n $(ls -A "$NVL_RUN" | grep -vxE 'etc|export|munge|munge-key|plugins|state|spool|log|run|tmp|dev|env.sh|settings') ]]; then
    echo "clean.sh: $NVL_RUN does not look like a cluster run directory; not removing it" >&2
    exit 1
  fi
  rm -rf "$NVL_RUN"
  nvl_log "removed $NVL_RUN"
fi
