#!/bin/bash
# Starts a real Slurm cluster on this machine: munged, slurmctld and one slurmd per node
# (each on its own port), fake GPUs (symlinks to /dev/null), configuration generated from
# a configs/ topology with `nvlplace export slurm`. Idempotent: a running cluster with the
# same settings is left alone; one with other settings is restarted. Needs root.
#
# Usage: contrib/cluster/start.sh [--topology FILE] [--select nvlplace|cons_tres]
#                            [--scheduler backfill|builtin] [--slurm-topology tree|block]
#                            [--keep-state] [--backup] [--preempt] [--imex N]
#                            [--gpu-sharing shard|mps] [--power-save] [--accounting]
#
# --topology  cluster YAML (default configs/lab-h100.yaml)
# --select    select/cons_tres_nvlplace (default) or stock select/cons_tres
# --scheduler sched/backfill (default, every second) or sched/builtin (main scheduler only)
# --slurm-topology  tree (default): topology/tree on the switches; block: topology/block with
#             a block per NVLink domain (Slurm 23.11+; topology.yaml on 25.05+), and
#             slurm_blocks: true in nvlplace.yaml
# --keep-state  start on the state a stopped cluster left, its jobs and their running steps
#             kept (an upgrade: stop slurmctld and the slurmd, not the jobs, then start the
#             new release's daemons with this); the daemons must be stopped
# --backup    a backup slurmctld too (a second SlurmctldHost, its own network, UTS and mount
#             namespaces on this machine; common.sh), taking over 5 s after the primary stops
# --preempt   preemption: PreemptType=preempt/partition_prio, PreemptMode=REQUEUE, and
#             partitions `scavenger` (PriorityTier=1) and `standby` (2) on the nodes of `gpu`
#             (PriorityTier=10), whose jobs the gpu partition's jobs preempt (requeue)
# --imex N    SwitchType=switch/nvidia_imex with N IMEX channels (Slurm 25.11+): a job
#             starts only while a channel is free (slurmctld allocates them; the slurmd here
#             have no IMEX device and set none up)
# --gpu-sharing shard|mps  GPUs shared too: gres/shard (4 per GPU) or gres/mps (100 per
#             GPU) on every GPU node, spread evenly over its GPUs
# --power-save  power saving: the second half of the nodes are cloud nodes (State=CLOUD),
#             powered down until a job needs them; a node powered down (those, or one told
#             with scontrol update state=power_down) has no slurmd, and Slurm's ResumeProgram
#             starts it when a job is allocated there
# --accounting  a slurmdbd (and its MariaDB, own data directory and port) for accounting,
#             with AccountingStorageTRES=gres/gpu: reservations of GPUs (Slurm 23.11+:
#             scontrol create reservation ... TRESPerNode=gres/gpu=N) need it
# Environment: see common.sh (NVLPLACE_CLUSTER_DIR, NVLPLACE_BUILD_DIR, NVLPLACE_PORT_BASE,
# NVLPLACE_SLURM_PREFIX and NVLPLACE_PLUGIN_LIB for another Slurm release);
# NVLPLACE_SLURM_FILES=DIR takes topology.conf and gres.conf from DIR instead of the export
# (files for the same --topology: slurm.conf's node lines come from it).
# Afterwards: `. $NVLPLACE_CLUSTER_DIR/env.sh` points srun, sbatch, squeue at the cluster.
set -euo pipefail
source "$(dirname "$0")/common.sh"

topology=$NVL_ROOT/configs/lab-h100.yaml
select=select/cons_tres_nvlplace
scheduler=backfill
slurm_topology=tree
keep_state=0
backup=0
preempt=0
imex=0
sharing=
power_save=0
accounting=0
while (($#)); do
  case $1 in
    --topology) topology=$2; shift 2 ;;
    --topology=*) topology=${1#*=}; shift ;;
    --select) select=$2; shift 2 ;;
    --select=*) select=${1#*=}; shift ;;
    --scheduler) scheduler=$2; shift 2 ;;
    --scheduler=*) scheduler=${1#*=}; shift ;;
    --slurm-topology) slurm_topology=$2; shift 2 ;;
    --slurm-topology=*) slurm_topology=${1#*=}; shift ;;
    --keep-state) keep_state=1; shift ;;
    --backup) backup=1; shift ;;
    --preempt) preempt=1; shift ;;
    --imex) imex=$2; shift 2 ;;
    --imex=*) imex=${1#*=}; shift ;;
    --gpu-sharing) sharing=$2; shift 2 ;;
    --gpu-sharing=*) sharing=${1#*=}; shift ;;
    --power-save) power_save=1; shift ;;
    --accounting) accounting=1; shift ;;
    -h|--help) sed -n '2,42p' "$0"; exit 0 ;;
    *) echo "start.sh: unknown argument $1" >&2; sed -n '2,42p' "$0" >&2; exit 2 ;;
  esac
done
case $select in
  nvlplace|select/cons_tres_nvlplace) select=select/cons_tres_nvlplace ;;
  cons_tres|select/cons_tres) select=select/cons_tres ;;
  *) echo "start.sh: --select must be nvlplace or cons_tres, not $select" >&2; exit 2 ;;
esac
case $scheduler in
  backfill|builtin) ;;
  *) echo "start.sh: --scheduler must be backfill or builtin, not $scheduler" >&2; exit 2 ;;
esac
case $sharing in
  ''|shard|mps) ;;
  *) echo "start.sh: --gpu-sharing must be shard or mps, not $sharing" >&2; exit 2 ;;
esac
case $slurm_topology in
  tree|block) ;;
  *) echo "start.sh: --slurm-topology must be tree or block, not $slurm_topology" >&2; exit 2 ;;
esac
topology=$(realpath "$topology")
[[ $(id -u) -eq 0 ]] || { echo "start.sh: run as root (several slurmd on one host)" >&2; exit 2; }
for f in "$NVL_PLUGIN_LIB/select_cons_tres_nvlplace.so" "$NVL_PLUGIN_LIB/spank_nvlplace.so"; do
  [[ -f $f ]] || { echo "start.sh: $f missing; build the plugin first" >&2; exit 2; }
done
[[ $imex =~ ^[0-9]+$ ]] || { echo "start.sh: --imex takes a number of channels, not $imex" >&2; exit 2; }
((!imex)) || nvl_release_at_least "$(nvl_slurm_release)" 25 11 ||
  { echo "start.sh: --imex needs Slurm 25.11 or later (switch/nvidia_imex), not $(nvl_slurm_release)" >&2; exit 2; }
[[ -x $NVL_SBIN/slurmctld && -x $NVL_SBIN/slurmd ]] ||
  { echo "start.sh: no slurmctld and slurmd in $NVL_SBIN" >&2; exit 2; }
[[ $slurm_topology == tree ]] || nvl_release_at_least "$(nvl_slurm_release)" 23 11 ||
  { echo "start.sh: --slurm-topology block needs Slurm 23.11 or later (topology/block), not $(nvl_slurm_release)" >&2; exit 2; }

# slurm_conf.py's own checksum too: a cluster started by an older generator (another
# partition layout) is not taken for this one.
conf_gen=$(md5sum <"$NVL_ROOT/contrib/cluster/slurm_conf.py" | cut -c1-12)
settings="conf=$conf_gen topology=$topology select=$select scheduler=$scheduler slurm_topology=$slurm_topology backup=$backup preempt=$preempt imex=$imex sharing=$sharing power_save=$power_save accounting=$accounting build=$NVL_BUILD plugins=$NVL_PLUGIN_LIB slurm=$NVL_SBIN ports=$NVL_PORT_BASE files=${NVLPLACE_SLURM_FILES:-export}"
if [[ -f $NVL_RUN/settings && $(cat "$NVL_RUN/settings") == "$settings" ]] &&
   nvl_pid_of "$NVL_RUN/run/munged.pid" >/dev/null &&
   nvl_pid_of "$NVL_RUN/run/slurmctld.pid" >/dev/null && nvl_all_nodes_up &&
   { ((!accounting)) || nvl_pid_of "$NVL_RUN/run/slurmdbd.pid" >/dev/null; }; then
  nvl_log "already running in $NVL_RUN ($select, $(basename "$topology"))"
  exit 0
fi
if ((keep_state)); then
  # stop.sh would cancel the jobs and stop their steps: the caller stopped the daemons.
  if nvl_pid_of "$NVL_RUN/run/slurmctld.pid" >/dev/null || [[ -n $(nvl_slurmd_pids) ]]; then
    echo "start.sh: --keep-state: stop slurmctld and every slurmd of $NVL_RUN first" >&2
    exit 2
  fi
  [[ -d $NVL_RUN/state ]] || { echo "start.sh: --keep-state: no state in $NVL_RUN" >&2; exit 2; }
else
  "$(dirname "$0")/stop.sh"
fi

mkdir -p "$NVL_RUN"/{etc,export,munge,munge-key,state,spool,log,run,tmp}
chmod 0755 "$NVL_RUN" "$NVL_RUN/munge"  # munged: the socket's directory open to all
chmod 0700 "$NVL_RUN/munge-key"
if ((!keep_state)); then
  rm -rf "$NVL_RUN/state"/* "$NVL_RUN/spool"/*
  # A fresh cluster starts fresh logs (the last run's are kept as *.log.1), so that job ids
  # of an earlier run never mix into this one's.
  # One process renames them all (an mv per log took 31 s for 1,026 logs).
  python3 -c 'import glob, os, sys
for f in glob.glob(os.path.join(sys.argv[1], "*.log")): os.replace(f, f + ".1")' "$NVL_RUN/log"
fi

# munged with our own key, socket and files (one left running by a kept cluster is kept).
[[ -s $NVL_RUN/munge-key/munge.key ]] || mungekey --create --keyfile="$NVL_RUN/munge-key/munge.key"
nvl_pid_of "$NVL_RUN/run/munged.pid" >/dev/null || /usr/sbin/munged --force --key-file="$NVL_RUN/munge-key/munge.key" \
  --socket="$NVL_RUN/munge/munge.socket" --pid-file="$NVL_RUN/run/munged.pid" \
  --log-file="$NVL_RUN/log/munged.log" --seed-file="$NVL_RUN/munge-key/munged.seed"
nvl_wait_for 20 "munged socket" test -S "$NVL_RUN/munge/munge.socket"

# Slurm files from the topology, then slurm.conf around them.
rm -f "$NVL_RUN/export"/*
if [[ -n ${NVLPLACE_SLURM_FILES:-} ]]; then
  cp "$NVLPLACE_SLURM_FILES/topology.conf" "$NVLPLACE_SLURM_FILES/gres.conf" "$NVL_RUN/export/"
  for f in topology-block.conf topology.yaml; do
    [[ ! -f $NVLPLACE_SLURM_FILES/$f ]] || cp "$NVLPLACE_SLURM_FILES/$f" "$NVL_RUN/export/"
  done
else
  "$NVL_CLI" export slurm "$topology" --slurm-release "$(nvl_slurm_release)" \
    --out-dir "$NVL_RUN/export"
fi
# Slurm's own plugins through a directory of links that leaves out any nvlplace .so found
# there (an installed nvlplace-slurm-plugin package): up to 24.11 Slurm loads every select
# plugin of PluginDir, and two with one plugin id stop slurmctld. With NVLPLACE_PLUGIN_LIB
# set to Slurm's own plugin directory the cluster runs the installed plugins
# (tests/slurm/package.sh).
rm -rf "$NVL_RUN/plugins"
mkdir -p "$NVL_RUN/plugins"
plugin_dir=$NVL_RUN/plugins
[[ $NVL_PLUGIN_LIB -ef $NVL_SLURM_PLUGINS ]] || plugin_dir+=":$NVL_PLUGIN_LIB"
links=()
for f in "$NVL_SLURM_PLUGINS"/*; do
  [[ ${f##*/} == *nvlplace* && ! $NVL_PLUGIN_LIB -ef $NVL_SLURM_PLUGINS ]] && continue
  links+=("$f")
done
ln -s -t "$NVL_RUN/plugins" "${links[@]}"
net=()
((!preempt)) || net+=(--preempt)
((!imex)) || net+=(--imex "$imex")
[[ -z $sharing ]] || net+=(--gpu-sharing "$sharing")
((!power_save)) || net+=(--power-save "$NVL_SBIN/slurmd")
((!accounting)) || net+=(--accounting "$NVL_DBD_PORT:$NVL_DB_PORT")
if ((backup)); then
  nvl_backup_net_up || { nvl_log "cannot set up the backup controller's network namespace"; exit 1; }
  net+=(--ctld-addr "$NVL_BK_HOST_ADDR" --backup-host "$NVL_BK_NAME" --backup-addr "$NVL_BK_ADDR"
       --node-addr "$NVL_BK_HOST_ADDR")
fi
python3 "$NVL_ROOT/contrib/cluster/slurm_conf.py" "${net[@]}" --export-dir "$NVL_RUN/export" \
  --topology "$topology" --cli "$NVL_CLI" --run-dir "$NVL_RUN" --plugin-dir "$plugin_dir" \
  --spank "$NVL_PLUGIN_LIB/spank_nvlplace.so" --select "$select" --scheduler "$scheduler" \
  --slurm-topology "$slurm_topology" --host "$(hostname -s)" \
  --ctld-port "$NVL_PORT_BASE" --node-port "$((NVL_PORT_BASE + 100))"
cat >"$NVL_RUN/etc/nvlplace.yaml" <<EOF
# nvlplace select plugin configuration (read again on scontrol reconfigure).
topology: $topology
policy: topo
log_level: info
candidates: 3
EOF
[[ $slurm_topology == tree ]] || echo "slurm_blocks: true" >>"$NVL_RUN/etc/nvlplace.yaml"
cat >"$NVL_RUN/env.sh" <<EOF
export SLURM_CONF=$SLURM_CONF
export PATH=$NVL_SBIN/../bin:\$PATH
EOF

# Beyond 64 nodes, on a machine of two CPUs or more, slurmctld runs on CPU 0 and every
# slurmd, with its job steps and jobs, on the others: in a burst on 1,024 nodes the job
# steps took 60-80% of the machine's CPU and slurmctld, whose cycles bench.sh times by the
# clock, 2-5%; and a step of a select/cons_tres_nvlplace cluster loads that .so with its
# C++ libraries (about 25 ms of CPU per step), so the plugin's rounds were slowed by work a
# real cluster does on its compute nodes.
mapfile -t nodes < <(nvl_nodes)
pin_slurmd=()
cpus=$(nproc)
if ((${#nodes[@]} > 64 && cpus >= 2)); then
  NVL_CTLD_PIN=(taskset -c 0)
  pin_slurmd=(taskset -c "1-$((cpus - 1))")
  nvl_log "slurmctld on CPU 0, the slurmd and their jobs on CPUs 1-$((cpus - 1))"
fi
# Every thread takes a pid: 1,024 slurmd, and in a burst a slurmstepd with its threads, a
# shell and a sleep per running job, came past kernel.pid_max (32,768 on a 2-CPU machine):
# a slurmstepd fork failed with EAGAIN ("Resource temporarily unavailable"), the job was
# requeued and held, and bench.sh waited for it in vain (2026-11-28). Raised for large
# clusters where root may (the kernel's own ceiling on 64-bit machines is 4,194,304).
pid_max=$(cat /proc/sys/kernel/pid_max 2>/dev/null || echo 0)
if ((${#nodes[@]} > 64 && pid_max < 4194304)); then
  if echo 4194304 >/proc/sys/kernel/pid_max 2>/dev/null; then
    nvl_log "kernel.pid_max raised from $pid_max to 4194304 for ${#nodes[@]} slurmd"
  else
    nvl_log "kernel.pid_max is $pid_max and cannot be raised here: job launches may fail" \
      "with EAGAIN in a burst (raise it as root: sysctl -w kernel.pid_max=4194304)"
  fi
fi
if ((accounting)); then
  nvl_start_accounting || { nvl_log "slurmdbd did not come up (logs in $NVL_RUN/log)"; exit 1; }
fi
if ((keep_state)); then nvl_start_slurmctld; else nvl_start_slurmctld -c; fi
# One slurmd after the other (each returns once it has daemonized; starting four at a time
# was no faster: a start is 40-80 ms of CPU, mostly exec, dynamic linking and page faults),
# and no other process per node: a fork and exec cost 10-30 ms on this machine.
mkdir -p "${nodes[@]/#/$NVL_RUN/spool/}"
# Cloud nodes (--power-save) start powered down: Slurm starts their slurmd (resume.sh). With
# --keep-state those awake in the state slurmctld kept start here.
declare -A cloud=()
while read -r node; do cloud[$node]=1; done <"$NVL_RUN/etc/cloud-nodes"
if ((keep_state)) && ((${#cloud[@]})); then
  while read -r node state; do
    [[ $state == *"~" ]] || unset "cloud[$node]"
  done < <(sinfo -h -N -o '%N %t' 2>/dev/null)
fi
for node in "${nodes[@]}"; do
  [[ -n ${cloud[$node]:-} ]] && continue
  "${pin_slurmd[@]}" "$NVL_SBIN/slurmd" -f "$SLURM_CONF" -N "$node"
done
nvl_wait_nodes_up || { nvl_log "the cluster did not come up (logs in $NVL_RUN/log)"; exit 1; }
if ((backup)); then
  nvl_start_backup || { nvl_log "the backup slurmctld did not come up (see $NVL_RUN/log)"; exit 1; }
fi
echo "$settings" >"$NVL_RUN/settings"
nvl_log "up: ${#nodes[@]} nodes, $select, $(basename "$topology"); . $NVL_RUN/env.sh"
