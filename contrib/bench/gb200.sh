#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# nvlplace against the stock setups GB200 NVL72 sites run, on the local cluster: the same
# seeded job mix under the same background load, once per setup, and where each job landed
# decides how long it runs (a measurement, not a test; needs root; Slurm 23.11+ for block).
# Usage: contrib/bench/gb200.sh [--trays 144|288] [--patterns whole,partial,drained]
#            [--setups block,tree,nvlplace,nvlplace-spares,nvlplace-gpus] [--jobs N]
#            [--base-seconds S] [--window S]
#            [--seed S] [--out DIR]
# Setups: block = cons_tres + topology/block (a block per rack), jobs with the --segment
#   NVIDIA's guidance gives (TP=8 on 2 trays: --segment=2; TP=16 on 8 or 16 trays:
#   --segment=4); tree = cons_tres + topology/tree, the same jobs without --segment;
#   nvlplace = select/cons_tres_nvlplace + topology/block, the same --segment and --nvl-tp=TP,
#   each rack's 2 spare trays kept free (the cluster file's spares: 2); nvlplace-spares = the
#   same with a policy that lets every job take them (use_spares: true), as stock does;
#   nvlplace-gpus = select/cons_tres_nvlplace + topology/tree, spares usable, TP jobs asked
#   as a user of nvlplace would, --gpus=N --nvl-tp=TP without -N or --segment (a TP group
#   may then take the free GPUs of partly busy trays of one rack), and the policy's
#   max_comm_ratio: 3 (a job whose placement now would spend over 3x the communication of
#   its best on the idle cluster waits, as block makes a job without --segment wait).
#   Plain jobs (--gpus=8, no -N) are the same in all.
# Patterns (gb200_report.py pattern): background holder jobs pinned with -w, and drained
#   trays, applied identically before the measured jobs: whole (whole trays free here and
#   there), partial (partly busy trays), drained (2 drained trays per rack).
# Each measured job asks the CLI for the cost model's stretch of its own GPUs in rank order
#   (NVLPLACE_RANKMAP when the plugin placed it, else Slurm's node order; plain jobs as
#   TP 1) and sleeps base-seconds x stretch. The jobs are queued while the partition is
#   down, in a fixed priority order, then the partition goes up (time 0); the run ends when
#   all ended or after --window seconds (default 900). Defaults: 144 trays, all patterns and
#   setups, 40 jobs, base 30 s, seed 1, out $NVLPLACE_BUILD_DIR/bench/gb200. Writes
#   OUT/report.md and OUT/report.json; the cluster is removed at the end.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../cluster/common.sh"
usage() { sed -n '3,31p' "$0" | sed 's/^# \{0,1\}//'; }
trays=144
patterns=whole,partial,drained
setups=block,tree,nvlplace
jobs=40
base=30
window=900
seed=1
out=$NVL_BUILD/bench/gb200
while (($#)); do
  case $1 in
    --trays) trays=${2:-}; shift 2 || shift ;;
    --patterns) patterns=${2:-}; shift 2 || shift ;;
    --setups) setups=${2:-}; shift 2 || shift ;;
    --jobs) jobs=${2:-}; shift 2 || shift ;;
    --base-seconds) base=${2:-}; shift 2 || shift ;;
    --window) window=${2:-}; shift 2 || shift ;;
    --seed) seed=${2:-}; shift 2 || shift ;;
    --out) out=${2:-}; shift 2 || shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "gb200.sh: unknown argument $1" >&2; usage >&2; exit 2 ;;
  esac
done
bad() { echo "gb200.sh: $*" >&2; usage >&2; exit 2; }
case $trays in
  144) topology=$NVL_ROOT/configs/gb200-nvl72-su.yaml ;;
  288) topology=$NVL_ROOT/configs/gb200-nvl72-2su.yaml ;;
  *) bad "--trays takes 144 or 288, not '$trays'" ;;
esac
[[ $patterns =~ ^((whole|partial|drained),?)+$ ]] || bad "--patterns: whole, partial, drained"
[[ $setups =~ ^((block|tree|nvlplace|nvlplace-spares|nvlplace-gpus),?)+$ ]] ||
  bad "--setups: block, tree, nvlplace, nvlplace-spares, nvlplace-gpus"
[[ $jobs =~ ^[1-9][0-9]*$ && $window =~ ^[1-9][0-9]*$ ]] || bad "--jobs and --window take whole numbers"
[[ $base =~ ^[0-9]+(\.[0-9]+)?$ ]] || bad "--base-seconds takes a number of seconds"
[[ -n $out ]] || bad "--out needs a directory"
[[ $(id -u) -eq 0 ]] || { echo "gb200.sh: run as root (start.sh starts a slurmd per tray)" >&2; exit 2; }
[[ -x $NVL_CLI ]] || { echo "gb200.sh: no nvlplace CLI at $NVL_CLI; build first" >&2; exit 2; }
IFS=, read -ra patterns <<<"$patterns"
IFS=, read -ra setups <<<"$setups"
mkdir -p "$out"
out=$(cd "$out" && pwd)
report=$here/gb200_report.py
# Every job's time limit: its base time at the worst stretch the cost model gives (3.7 for a
# job over two racks; 6 to be safe), in minutes, plus one. The same for every setup, so that
# backfill plans with the same figures.
limit=$(awk -v b="$base" 'BEGIN { printf "%d", int(b * 6 / 60) + 1 }')
cd /tmp
sampler=
trap '[[ -z $sampler ]] || kill "$sampler" 2>/dev/null; "$NVL_ROOT/contrib/cluster/clean.sh" >/dev/null 2>&1 || true' EXIT

# The measured job's batch script: ARGS OUT CLI TOPOLOGY KIND TP BASE.
cat >"$out/job.sh" <<'EOF'
#!/bin/bash
began=$(date +%s.%N)
out=$1 cli=$2 topo=$3 kind=$4 tp=$5 base=$6
if [[ -n ${NVLPLACE_RANKMAP:-} ]]; then
  order=rankmap
  words=$(for e in ${NVLPLACE_RANKMAP#v1 }; do IFS=: read -r n g _ <<<"$e"; echo "$n:$g"; done)
else
  order=slurm
  words=$(scontrol show job -d "$SLURM_JOB_ID" |
    sed -n 's/^ *Nodes=\([^ ]*\) .*GRES=[^(]*(IDX:\([^)]*\)).*/\1:\2/p')
fi
words=$(echo $words)
comm=$("$cli" check comm --topology "$topo" --tp "$tp" $words 2>&1) || comm="stretch=1 error=\"${comm//\"/}\""
stretch=$(sed -n 's/.*stretch=\([0-9.]*\).*/\1/p' <<<"$comm")
secs=$(awk -v b="$base" -v s="${stretch:-1}" 'BEGIN { printf "%.1f", b * s }')
echo "kind=$kind tp=$tp order=$order words=\"$words\" $comm run_s=$secs" >"$out/jobs/$SLURM_JOB_ID"
# The run lasts base x stretch from the script's start: the time asking where it landed took
# (longer when dozens of jobs start at once on this machine's one job core) is not added.
sleep "$(awk -v s="$secs" -v b="$began" -v n="$(date +%s.%N)" 'BEGIN { r = s - (n - b); printf "%.2f", (r > 0 ? r : 0) }')"
EOF
chmod +x "$out/job.sh"

# The sbatch options of a job of KIND on SETUP.
job_args() {
  local kind=$1 setup=$2 tp nodes gpus
  read -r tp nodes gpus <<<"$3"
  if [[ $kind == plain ]]; then echo "--gpus=$gpus"; return; fi
  if [[ $setup == nvlplace-gpus ]]; then echo "--gpus=$gpus --nvl-tp=$tp"; return; fi
  local args="-N$nodes --gpus-per-node=4"
  # nvlplace keeps the user's --segment: under topology/block a job of 16 trays without one
  # is confined to one block (a whole rack's 16 planned trays free), and never started here.
  [[ $setup == tree ]] || args+=" --segment=$([[ $tp == 8 ]] && echo 2 || echo 4)"
  [[ $setup != nvlplace* ]] || args+=" --nvl-tp=$tp"
  echo "$args"
}

# sdiag's cycle figures, key=value lines.
sdiag_figures() {
  sdiag 2>/dev/null | awk '
    /^Main schedule statistics/ {s = "main"} /^Backfilling stats/ {s = "bf"}
    /^Latency|^Remote Procedure Call/ {s = ""}
    s != "" && /Total cycles:/ {print s "_cycles=" $3}
    s != "" && /Mean cycle:/ {print s "_mean_us=" $3}'
}

queue_empty() { [[ -z $(squeue -h -o %i 2>/dev/null) ]]; }
measured_left() { # IDS-FILE: measured jobs still in the queue
  local q
  q=$(squeue -h -o %i 2>/dev/null) || return 0
  grep -cFxf "$1" <<<"$q" || true
}

# run_pattern SETUP PATTERN: one measured run; results in $out/PATTERN/SETUP.
run_pattern() {
  local setup=$1 pat=$2 dir=$out/$2/$1 holders=() drained=() id what nodes k n i
  rm -rf "$dir"
  mkdir -p "$dir/jobs"
  nvl_log "$setup / $pat: load pattern"
  while read -r what nodes k; do
    case $what in
      drain) scontrol update nodename="$nodes" state=drain reason=bench; drained+=("$nodes") ;;
      hold)
        n=$("$NVL_CLI" check hostlist --expand "$nodes" | wc -w)
        id=$(sbatch --parsable -o /dev/null -J holder -w "$nodes" -N"$n" --gres=gpu:"$k" \
          --wrap 'sleep 100000')
        holders+=("${id%%;*}") ;;
    esac
  done < <(python3 "$report" pattern --trays "$trays" --pattern "$pat" --seed "$seed")
  holders_running() { [[ $(squeue -h -t R -n holder -o %i | wc -l) -eq ${#holders[@]} ]]; }
  nvl_wait_for 120 "${#holders[@]} holder jobs to run" holders_running ||
    { squeue -n holder -t PD -o '%i %r %N' | head >&2; return 1; }
  # The measured jobs, queued in a fixed order while the partition is down.
  scontrol update partitionname=gpu state=down
  : >"$dir/ids"
  i=0
  while read -r kind tp nodes gpus; do
    # shellcheck disable=SC2046
    id=$(sbatch --parsable -o /dev/null -J "$kind" --priority=$((100000 - i)) --time="$limit" \
      $(job_args "$kind" "$setup" "$tp $nodes $gpus") "$out/job.sh" "$dir" "$NVL_CLI" "$topology" \
      "$kind" "$tp" "$base")
    echo "${id%%;*}" >>"$dir/ids"
    i=$((i + 1))
  done < <(python3 "$report" mix --jobs "$jobs" --seed "$seed")
  sdiag -r >/dev/null
  python3 "$report" sample --out "$dir/samples" --stop "$dir/stop" --jobs-file "$dir/ids" &
  sampler=$!
  local t0
  t0=$(date +%s)
  scontrol update partitionname=gpu state=up
  nvl_log "$setup / $pat: $jobs jobs queued, partition up"
  while (($(measured_left "$dir/ids") > 0 && $(date +%s) < t0 + window)); do sleep 2; done
  local tend
  tend=$(date +%s)
  sdiag_figures >"$dir/sdiag"
  touch "$dir/stop"
  wait "$sampler" || true
  sampler=
  echo "{\"t0\": $t0, \"window_s\": $window, \"window_end\": $((t0 + window)), \"ended\": $tend," \
    "\"setup\": \"$setup\", \"pattern\": \"$pat\", \"holders\": ${#holders[@]}," \
    "\"drained\": ${#drained[@]}, \"jobs\": $jobs, \"base_s\": $base}" >"$dir/meta.json"
  # Jobs still running or pending at the window's end are cancelled (counted as not done).
  # shellcheck disable=SC2046
  scancel $(cat "$dir/ids") 2>/dev/null || true
  local all
  all=$(scontrol -o -d show job 2>/dev/null)
  while read -r id; do
    python3 "$report" job --cli "$NVL_CLI" --topology "$topology" --out "$dir" --id "$id" <<<"$all"
  done <"$dir/ids" >"$dir/jobs.jsonl"
  nvl_cancel_all || true
  nvl_wait_for 120 "all jobs to end" queue_empty || true
  for nodes in "${drained[@]}"; do scontrol update nodename="$nodes" state=resume; done
  nvl_log "$setup / $pat: done in $((tend - t0)) s"
}

for setup in "${setups[@]}"; do
  case $setup in
    block) select=cons_tres slurm_topology=block ;;
    tree) select=cons_tres slurm_topology=tree ;;
    nvlplace-gpus) select=nvlplace slurm_topology=tree ;;
    nvlplace*) select=nvlplace slurm_topology=block ;;
  esac
  "$NVL_ROOT/contrib/cluster/start.sh" --topology "$topology" --select "$select" \
    --slurm-topology "$slurm_topology" >/dev/null
  # shellcheck disable=SC1091
  source "$NVL_RUN/env.sh"
  if [[ $setup == nvlplace-spares || $setup == nvlplace-gpus ]]; then
    { cat "$NVL_ROOT/configs/policies/topo.yaml"; echo "use_spares: true"
      [[ $setup != nvlplace-gpus ]] || echo "max_comm_ratio: 3"; } \
      >"$NVL_RUN/etc/topo-use-spares.yaml"
    sed -i "s|^policy: .*|policy: $NVL_RUN/etc/topo-use-spares.yaml|" "$NVL_RUN/etc/nvlplace.yaml"
    mark=$(wc -l <"$NVL_RUN/log/slurmctld.log")
    nvl_reconfigure
    reloaded() { tail -n +"$((mark + 1))" "$NVL_RUN/log/slurmctld.log" | grep -q "nvlplace: loaded"; }
    nvl_wait_for 60 "the policy that takes spares to load" reloaded ||
      { echo "gb200.sh: nvlplace did not load $NVL_RUN/etc/topo-use-spares.yaml" >&2; exit 1; }
  fi
  for pat in "${patterns[@]}"; do run_pattern "$setup" "$pat"; done
done

{
  echo "## GB200 benchmark, $(date -u +%Y-%m-%d), Slurm $(nvl_slurm_release), $trays trays"
  echo
  echo "\`contrib/bench/gb200.sh --trays $trays --patterns $(IFS=,; echo "${patterns[*]}")" \
    "--setups $(IFS=,; echo "${setups[*]}") --jobs $jobs --base-seconds $base --window $window" \
    "--seed $seed\`"
  python3 "$report" report --out "$out" --json "$out/report.json"
} >"$out/report.md"
cat "$out/report.md"
