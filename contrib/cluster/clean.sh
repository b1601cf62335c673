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
# A daemon the stop missed would run on in a removed directory and meet the next cluster
# started here (same ports and node names): say which, keep the directory.
if left=$(nvl_cluster_daemons) && [[ -n $left ]]; then
  echo "clean.sh: still running after stop.sh, $NVL_RUN kept:" $left >&2
  exit 1
fi
if [[ -d $NVL_RUN ]]; then
  # Only a directory that start.sh made: never a path given by mistake.
  if [[ ! -f $NVL_RUN/env.sh && -n $(ls -A "$NVL_RUN" | grep -vxE 'etc|export|munge|munge-key|mysql|plugins|state|spool|log|run|tmp|dev|env.sh|settings') ]]; then
    echo "clean.sh: $NVL_RUN does not look like a cluster run directory; not removing it" >&2
    exit 1
  fi
  rm -rf "$NVL_RUN"
  nvl_log "removed $NVL_RUN"
fi
