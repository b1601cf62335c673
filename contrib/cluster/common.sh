# Paths and helpers of the local Slurm cluster, sourced by start.sh, stop.sh, clean.sh and
# the integration tests (bash). Settings, all optional:
#   NVLPLACE_CLUSTER_DIR  run directory: config, state, logs, pids (default /tmp/nvlplace-cluster)
#   NVLPLACE_BUILD_DIR    build tree holding plugin/lib and contrib/nvlplace (default build)
#   NVLPLACE_PORT_BASE    slurmctld port; slurmd ports start 100 above (default 28100;
#                         keep them below 32768, where Linux's ephemeral ports begin)
#   NVLPLACE_SLURM_PREFIX the Slurm release to run: its install prefix (sbin/slurmctld,
#                         bin/sbatch, lib/slurm), as contrib/slurm/release.sh builds it;
#                         default Debian's packages (/usr)
#   NVLPLACE_PLUGIN_LIB   the nvlplace .so files built for that release
#                         (default $NVLPLACE_BUILD_DIR/plugin/lib)

NVL_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
NVL_RUN=${NVLPLACE_CLUSTER_DIR:-/tmp/nvlplace-cluster}
case $NVL_RUN in /*) ;; *) NVL_RUN=$PWD/$NVL_RUN ;; esac  # daemons chdir to /
NVL_BUILD=${NVLPLACE_BUILD_DIR:-$NVL_ROOT/build}
case $NVL_BUILD in /*) ;; *) NVL_BUILD=$PWD/$NVL_BUILD ;; esac
NVL_PORT_BASE=${NVLPLACE_PORT_BASE:-28100}
NVL_PLUGIN_LIB=${NVLPLACE_PLUGIN_LIB:-$NVL_BUILD/plugin/lib}
case $NVL_PLUGIN_LIB in /*) ;; *) NVL_PLUGIN_LIB=$PWD/$NVL_PLUGIN_LIB ;; esac
NVL_CLI=$NVL_BUILD/contrib/nvlplace
export SLURM_CONF=$NVL_RUN/etc/slurm.conf
# Daemons by absolute path, commands first on PATH, Slurm's own plugins: one release.
if [[ -n ${NVLPLACE_SLURM_PREFIX:-} ]]; then
  NVL_SBIN=$NVLPLACE_SLURM_PREFIX/sbin
  NVL_SLURM_PLUGINS=$NVLPLACE_SLURM_PREFIX/lib/slurm
  [[ :$PATH: == *":$NVLPLACE_SLURM_PREFIX/bin:"* ]] || export PATH=$NVLPLACE_SLURM_PREFIX/bin:$PATH
else
  NVL_SBIN=/usr/sbin
  NVL_SLURM_PLUGINS=/usr/lib/x86_64-linux-gnu/slurm-wlm
  if command -v dpkg >/dev/null && dpkg -L slurm-wlm-basic-plugins >/dev/null 2>&1; then
    NVL_SLURM_PLUGINS=$(dirname "$(dpkg -L slurm-wlm-basic-plugins | grep '/libslurmfull.so$' | head -1)")
  fi
fi

nvl_log() { echo "cluster: $*" >&2; }

# The release of the cluster's Slurm ("22.05.8", "24.11.7"), from slurmctld -V: it reads no
# slurm.conf (scontrol --version retries a missing one for a minute).
nvl_slurm_release() { "$NVL_SBIN/slurmctld" -V | awk '{ print $2 }'; }
# nvl_release_at_least RELEASE MAJOR MINOR: true when RELEASE ("24.11.7") is MAJOR.MINOR or newer.
nvl_release_at_least() {
  local major=${1%%.*} rest=${1#*.}
  local minor=${rest%%.*}
  ((10#$major > $2 || (10#$major == $2 && 10#$minor >= $3)))
}
# True when `scontrol reconfigure` starts a new slurmctld process (23.11 and later).
nvl_reconfigure_restarts() { nvl_release_at_least "$1" 23 11; }
# nvl_reconfigure: `scontrol reconfigure`, returning once the slurmctld that answers owns its
# pid file. From 23.11 on the command starts a new slurmctld process and returns when that one
# has started, but the new process writes its pid only after the old one has exited (it waits
# for the file's lock): right after the command, the file may still name the old, exiting
# process (26.05.3: 12 of 15 reconfigures in a row read back the old pid at once, none 50 ms
# later), and a script that reads it then signals a process that is going away.
nvl_reconfigure() {
  local old
  old=$(nvl_pid_of "$NVL_RUN/run/slurmctld.pid")
  scontrol reconfigure || return 1
  nvl_reconfigure_restarts "$(nvl_slurm_release)" || return 0
  nvl_wait_for 30 "the reconfigured slurmctld to write its pid file" nvl_pid_file_moved_on "$old"
}
# nvl_pid_file_moved_on OLD: slurmctld's pid file names a live process other than OLD.
nvl_pid_file_moved_on() {
  local pid
  pid=$(nvl_pid_of "$NVL_RUN/run/slurmctld.pid") && [[ $pid != "$1" ]]
}
# True when gres.conf Links= helps stock cons_tres (before 24.05; see tests/slurm/links.sh).
nvl_links_help() { ! nvl_release_at_least "$1" 24 5; }

# nvl_wait_for SECONDS WHAT COMMAND...: polls COMMAND every 0.1 s until it succeeds; fails
# with a message naming WHAT after SECONDS.
# With NVL_WAIT_NOTE set (the tests set 10), a wait that took at least that many seconds
# says so on stderr: where a test's time goes, and how near a deadline it came.
nvl_wait_for() {
  local timeout=$1 what=$2
  shift 2
  local start=$SECONDS
  local deadline=$((start + timeout))
  until "$@" >/dev/null 2>&1; do
    if ((SECONDS >= deadline)); then
      nvl_log "timed out after ${timeout}s waiting for $what"
      return 1
    fi
    sleep 0.1
  done
  if [[ -n ${NVL_WAIT_NOTE:-} ]] && ((SECONDS - start >= NVL_WAIT_NOTE)); then
    nvl_log "waited $((SECONDS - start)) of ${timeout}s for $what"
  fi
  return 0
}

# The pid in a pid file if that process is alive (read by bash itself: these run once per
# slurmd, a thousand times on a large cluster).
nvl_pid_of() {
  local pid
  [[ -s $1 ]] || return 1
  read -r pid 2>/dev/null <"$1" || return 1
  [[ $pid =~ ^[0-9]+$ ]] && kill -0 "$pid" 2>/dev/null && echo "$pid"
}

nvl_gone() { ! kill -0 "$1" 2>/dev/null; }

# nvl_all_gone PID...: true when none of the processes is alive.
nvl_all_gone() {
  local pid
  for pid; do kill -0 "$pid" 2>/dev/null && return 1; done
  return 0
}

# nvl_stop_pids WHAT PID...: SIGTERM to all at once and wait while they exit; SIGKILL those
# left when none exited for 20 s (waiting by progress, as for the start).
nvl_stop_pids() {
  local what=$1 pid left=("${@:2}") alive last=-1 deadline
  ((${#left[@]})) || return 0
  kill -TERM "${left[@]}" 2>/dev/null
  while :; do
    alive=()
    for pid in "${left[@]}"; do kill -0 "$pid" 2>/dev/null && alive+=("$pid"); done
    left=("${alive[@]}")
    ((${#left[@]})) || return 0
    if ((last < 0 || ${#left[@]} < last)); then
      last=${#left[@]}
      deadline=$((SECONDS + 20))
    elif ((SECONDS >= deadline)); then
      break
    fi
    sleep 0.2
  done
  nvl_log "killing ${#left[@]} $what that did not exit in 20 s: ${left[*]:0:20}"
  kill -KILL "${left[@]}" 2>/dev/null
  nvl_wait_for 10 "${#left[@]} $what to die" nvl_all_gone "${left[@]}"
}

# The pids of this cluster's running slurmd, one per line: from their pid files, and every
# slurmd started with this cluster's slurm.conf that they miss. From 24.11 a slurmd re-executes
# itself on `scontrol reconfigure` and the new process writes its pid file: a stop that read
# the file before that stopped the old process only, and the new one outlived the cluster
# (found after a 24.11 health test; the next start failed with that node's old slurm.conf).
nvl_slurmd_pids() {
  local f pid conf
  # start.sh runs `slurmd -f $SLURM_CONF -N NODE` (one pgrep for a thousand nodes).
  conf=$(sed 's/[][\.*^$+?(){}|]/\\&/g' <<<"$SLURM_CONF")
  {
    for f in "$NVL_RUN"/run/slurmd-*.pid; do
      [[ -s $f ]] && read -r pid 2>/dev/null <"$f" && [[ $pid =~ ^[0-9]+$ ]] &&
        kill -0 "$pid" 2>/dev/null && echo "$pid"
    done
    pgrep -f -- "(^|/)slurmd -f $conf( |\$)"
  } | sort -un
  return 0
}

# Slurm and munge daemons of this cluster still running, not found by pid files: slurmd,
# slurmctld and munged by their command lines (each names a file of $NVL_RUN), slurmstepd as
# nvl_stray_stepds finds them (their command line is "slurmstepd: [JOB.STEP]"). "PID NAME"
# per line.
nvl_cluster_daemons() {
  local f comm pid
  for f in $(grep -lsF -- "$NVL_RUN/" /proc/[0-9]*/cmdline); do
    comm=
    read -r comm 2>/dev/null <"${f%/cmdline}/comm"
    f=${f#/proc/}
    case $comm in slurmd | slurmctld | munged | mariadbd) echo "${f%/cmdline} $comm" ;; esac
  done
  # slurmdbd's command line names no file (it reads SLURM_CONF's directory): by pid file.
  if pid=$(nvl_pid_of "$NVL_RUN/run/slurmdbd.pid"); then echo "$pid slurmdbd"; fi
  for pid in $(nvl_stray_stepds); do echo "$pid slurmstepd"; done
  return 0
}

# The nodes whose slurmd wrote a pid file and is no longer running, one per line.
nvl_dead_slurmds() {
  local node f pid
  for node in $(nvl_nodes); do
    f=$NVL_RUN/run/slurmd-$node.pid
    [[ -s $f ]] || continue
    read -r pid 2>/dev/null <"$f" && [[ $pid =~ ^[0-9]+$ ]] && kill -0 "$pid" 2>/dev/null ||
      echo "$node"
  done
  return 0
}

# nvl_stop_pid PID WHAT: SIGTERM, wait up to 20 s, then SIGKILL and wait.
nvl_stop_pid() {
  local pid=$1 what=$2
  kill -TERM "$pid" 2>/dev/null || return 0
  if ! nvl_wait_for 20 "$what (pid $pid) to exit" nvl_gone "$pid"; then
    kill -KILL "$pid" 2>/dev/null
    nvl_wait_for 10 "$what (pid $pid) to die" nvl_gone "$pid"
  fi
}

# Cancels every job of the cluster, named by squeue's %i (123_4 for an array task): 22.05's
# slurmctld refuses an array task's own job id ("job_str_signal(3): invalid JobId"), and a
# task requeued and held after a launch failed (slurmctld killed while it launched) keeps
# its own record, so cancelling by %A left it pending for ever.
nvl_cancel_all() {
  local jobs
  jobs=$(squeue -h -o %i 2>/dev/null) || return 1
  # shellcheck disable=SC2086
  [[ -z $jobs ]] || scancel $jobs
}

nvl_nodes() { cat "$NVL_RUN/etc/nodes" 2>/dev/null; }

# Pipelines end in `grep >/dev/null`, never `grep -q`: under pipefail an early exit of grep
# -q kills the writer with SIGPIPE and fails the pipeline although grep matched.
nvl_ctld_up() { scontrol ping 2>/dev/null | grep 'is UP' >/dev/null; }

# Up, or stopped by a fatal error logged after byte offset $2 of log $1.
nvl_ctld_up_or_fatal() { nvl_ctld_up || tail -c +"$2" "$1" 2>/dev/null | grep -q 'fatal:'; }

# A command prefix that runs slurmctld on the CPUs start.sh set aside for it (taskset), or
# nothing (start.sh sets it on large clusters).
NVL_CTLD_PIN=()

# Starts slurmctld; `-c` drops saved jobs (a fresh cluster). Waits until it answers; a
# slurmctld that stops at start (a plugin it cannot load) fails at once with its reason.
nvl_start_slurmctld() {
  local log=$NVL_RUN/log/slurmctld.log from fatal
  if nvl_pid_of "$NVL_RUN/run/slurmctld.pid" >/dev/null; then return 0; fi
  from=$(($(stat -c %s "$log" 2>/dev/null || echo 0) + 1))
  "${NVL_CTLD_PIN[@]}" "$NVL_SBIN/slurmctld" -f "$SLURM_CONF" "$@" || return 1
  nvl_wait_for 60 "slurmctld to answer (see $log)" nvl_ctld_up_or_fatal "$log" "$from" ||
    return 1
  if ! nvl_ctld_up && fatal=$(tail -c +"$from" "$log" 2>/dev/null | grep -m1 'fatal:'); then
    nvl_log "slurmctld stopped at start: ${fatal#*\] } (see $log)"
    return 1
  fi
}

# A backup slurmctld (start.sh --backup) runs on this machine as a host of its own: a network
# namespace joined to this one by a veth pair (this side $NVL_BK_HOST_ADDR, the backup's
# $NVL_BK_ADDR; every slurmd is reached at $NVL_BK_HOST_ADDR from both), a UTS namespace
# whose host name is the backup's SlurmctldHost, and a mount namespace where run/ is
# run-backup/, so that its pid file is its own. Same slurm.conf, state and log.
NVL_BK_NAME=nvlbackup
NVL_BK_NS=nvl-$NVL_PORT_BASE
NVL_BK_IF=nvlh$NVL_PORT_BASE
NVL_BK_HOST_ADDR=10.251.$((NVL_PORT_BASE % 250)).1
NVL_BK_ADDR=10.251.$((NVL_PORT_BASE % 250)).2

nvl_backup_net_up() {
  nvl_backup_net_down
  ip netns add "$NVL_BK_NS" &&
    ip link add "$NVL_BK_IF" type veth peer name "nvlb$NVL_PORT_BASE" &&
    ip link set "nvlb$NVL_PORT_BASE" netns "$NVL_BK_NS" &&
    ip addr add "$NVL_BK_HOST_ADDR/30" dev "$NVL_BK_IF" && ip link set "$NVL_BK_IF" up &&
    ip netns exec "$NVL_BK_NS" ip addr add "$NVL_BK_ADDR/30" dev "nvlb$NVL_PORT_BASE" &&
    ip netns exec "$NVL_BK_NS" ip link set "nvlb$NVL_PORT_BASE" up &&
    ip netns exec "$NVL_BK_NS" ip link set lo up
}

nvl_backup_net_down() {
  ip link del "$NVL_BK_IF" 2>/dev/null
  ip netns del "$NVL_BK_NS" 2>/dev/null
  return 0
}

# Starts the backup slurmctld (extra arguments go to slurmctld); returns once it answers.
nvl_start_backup() {
  mkdir -p "$NVL_RUN/run-backup"
  if nvl_pid_of "$NVL_RUN/run-backup/slurmctld.pid" >/dev/null; then return 0; fi
  ip netns exec "$NVL_BK_NS" unshare --mount --uts sh -c \
    'mount --bind "$1/run-backup" "$1/run" && hostname "$2" && shift 2 && exec "$@"' \
    sh "$NVL_RUN" "$NVL_BK_NAME" "$NVL_SBIN/slurmctld" -f "$SLURM_CONF" "$@" || return 1
  nvl_wait_for 60 "the backup slurmctld to answer" nvl_backup_up
}

nvl_backup_up() { scontrol ping 2>/dev/null | grep "(backup) at $NVL_BK_NAME is UP" >/dev/null; }

nvl_stop_backup() {
  local pid
  if pid=$(nvl_pid_of "$NVL_RUN/run-backup/slurmctld.pid"); then
    nvl_stop_pid "$pid" "backup slurmctld"
  fi
  rm -f "$NVL_RUN/run-backup/slurmctld.pid"
}

# Accounting (start.sh --accounting): a MariaDB server of the cluster's own (data in
# $NVL_RUN/mysql, 127.0.0.1 only, no grant tables: nothing but slurmdbd reaches it) and a
# slurmdbd on it, at ports 50 and 51 above slurmctld's (the slurmd ports start 100 above).
NVL_DBD_PORT=$((NVL_PORT_BASE + 50))
NVL_DB_PORT=$((NVL_PORT_BASE + 51))
nvl_dbd_up() { sacctmgr -n show cluster format=cluster >/dev/null 2>&1; }

# Starts MariaDB and slurmdbd (those running are kept) and waits until slurmdbd answers.
nvl_start_accounting() {
  local db=$NVL_RUN/mysql
  [[ -x /usr/sbin/mariadbd && -x $NVL_SBIN/slurmdbd ]] || {
    nvl_log "--accounting needs /usr/sbin/mariadbd and $NVL_SBIN/slurmdbd (contrib/setup.sh)"
    return 1
  }
  if ! nvl_pid_of "$NVL_RUN/run/mariadbd.pid" >/dev/null; then
    if [[ ! -d $db/mysql ]]; then
      rm -rf "$db" && mkdir -p "$db"
      mariadb-install-db --no-defaults --user=root --datadir="$db" --skip-test-db \
        >"$NVL_RUN/log/mariadb-install.log" 2>&1 ||
        { nvl_log "mariadb-install-db failed (see $NVL_RUN/log/mariadb-install.log)"; return 1; }
    fi
    # A session of its own, no descriptor of the caller's kept (ctest waits for its pipes).
    setsid /usr/sbin/mariadbd --no-defaults --user=root --datadir="$db" \
      --socket="$NVL_RUN/run/mariadbd.sock" --pid-file="$NVL_RUN/run/mariadbd.pid" \
      --log-error="$NVL_RUN/log/mariadbd.log" --bind-address=127.0.0.1 --port="$NVL_DB_PORT" \
      --skip-grant-tables --innodb-buffer-pool-size=64M </dev/null >/dev/null 2>&1 &
    nvl_wait_for 60 "MariaDB (see $NVL_RUN/log/mariadbd.log)" \
      nvl_pid_of "$NVL_RUN/run/mariadbd.pid" || return 1
  fi
  if ! nvl_pid_of "$NVL_RUN/run/slurmdbd.pid" >/dev/null; then
    "$NVL_SBIN/slurmdbd" || return 1
  fi
  nvl_wait_for 60 "slurmdbd on port $NVL_DBD_PORT (see $NVL_RUN/log/slurmdbd.log)" nvl_dbd_up
}

nvl_stop_accounting() {
  local pid
  if pid=$(nvl_pid_of "$NVL_RUN/run/slurmdbd.pid"); then nvl_stop_pid "$pid" slurmdbd; fi
  if pid=$(nvl_pid_of "$NVL_RUN/run/mariadbd.pid"); then nvl_stop_pid "$pid" mariadbd; fi
  rm -f "$NVL_RUN/run/slurmdbd.pid" "$NVL_RUN/run/mariadbd.pid"
}

nvl_stop_slurmctld() {
  local pid
  if pid=$(nvl_pid_of "$NVL_RUN/run/slurmctld.pid"); then
    nvl_stop_pid "$pid" slurmctld
  fi
}

# Every node of the cluster responding and usable (idle, mixed or allocated).
nvl_all_nodes_up() {
  local want have
  want=$(nvl_nodes | wc -l)
  have=$(nvl_nodes_up_count)
  [[ $want -gt 0 && $have -eq $want ]]
}

# The number of this cluster's nodes that respond and are usable (idle, mixed or allocated),
# or are powered down (idle~: Slurm boots them for a job; start.sh --power-save).
nvl_nodes_up_count() {
  sinfo -h -N -o '%N %t' 2>/dev/null | awk '$2 ~ /^(idle|mix|alloc|idle~)$/' | sort -u | wc -l
}

# nvl_wait_nodes_up: waits until every node is up. Slow is not stuck: on a loaded 2-core
# machine 16 slurmd starting at once (hwloc, registration) can take a minute, so it fails
# only when no further node came up for 30 s, or when a slurmd of this cluster died, and then
# names the nodes missing and the last lines of their logs. Asks sinfo every 0.2 s, every
# 1 s beyond 64 nodes (one `sinfo -N` of 1,024 nodes costs 60 ms of CPU in the command and
# as much in slurmctld, taken from the slurmd still starting).
nvl_wait_nodes_up() {
  local want have last=-1 deadline node dead pause=0.2
  want=$(nvl_nodes | wc -l)
  ((want <= 64)) || pause=1
  while :; do
    have=$(nvl_nodes_up_count)
    [[ $want -gt 0 && $have -eq $want ]] && return 0
    if ((have > last)); then
      last=$have
      deadline=$((SECONDS + 30))
    fi
    dead=$(nvl_dead_slurmds)
    if [[ -n $dead ]] || ((SECONDS >= deadline)); then
      local down
      down=$(sinfo -h -N -o '%N %t' 2>/dev/null | awk '$2 !~ /^(idle|mix|alloc|idle~)$/ { print $1 }' | sort -u)
      # shellcheck disable=SC2086
      nvl_log "$have of $want nodes up${dead:+; slurmd exited on $(echo $dead)}; not up:" \
        "$("$NVL_CLI" check hostlist --compress $down 2>/dev/null || echo $down)"
      for node in $(echo "$down" | head -n 20); do
        [[ -f $NVL_RUN/log/slurmd-$node.log ]] || continue
        grep -E 'error|fatal' "$NVL_RUN/log/slurmd-$node.log" | tail -n 2 | sed "s/^/  slurmd-$node: /" >&2
      done
      return 1
    fi
    sleep "$pause"
  done
}

# slurmstepd processes of this cluster (they outlive a slurmd): found by their spool
# directory, never by name alone.
nvl_stray_stepds() {
  local p comm
  for p in /proc/[0-9]*; do
    comm=
    read -r comm 2>/dev/null <"$p/comm"
    [[ $comm == slurmstepd ]] || continue
    if ls -l "$p/fd" "$p/cwd" 2>/dev/null | grep "$NVL_RUN/" >/dev/null; then
      echo "${p#/proc/}"
    elif { tr '\0' '\n' <"$p/environ"; } 2>/dev/null | grep -x "SLURM_CONF=$SLURM_CONF" >/dev/null; then
      echo "${p#/proc/}"
    fi
  done
}

# "node03:4-7" (or "node[04-05]:0-7" when nodes share their GPU indexes) per node line of a
# job, from `scontrol show job -d`.
nvl_job_gpus() {
  scontrol show job -d "$1" | sed -n 's/^ *Nodes=\([^ ]*\) .*GRES=[^(]*(IDX:\([^)]*\)).*/\1:\2/p'
}

# Every GPU of a job as "node04:0", one per line, sorted (`nvlplace check gpus` expands them).
nvl_job_gpu_list() {
  local words
  words=$(nvl_job_gpus "$1")
  # shellcheck disable=SC2086
  [[ -z $words ]] || "$NVL_CLI" check gpus $words | sort
}

# A job's SystemComment (`scontrol show job`), "" when it has none.
nvl_job_comment() { scontrol show job "$1" | sed -n 's/^ *SystemComment=\(.*[^ ]\) *$/\1/p'; }

# The plugin's placement line (plugin/README.md, "The placement line"), read by its one
# reader: nvl_placement_log (--log FILE|- | --comment TEXT) [--job ID] [--field KEY]...
# [--count] [KEY=VALUE | KEY~TEXT]... (contrib/cluster/placement_log.py).
nvl_placement_log() { python3 "$NVL_ROOT/contrib/cluster/placement_log.py" "$@"; }
