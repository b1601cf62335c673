#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Slurm's own regression tests (the expect testsuite: GPU, GRES, select and scheduling tests)
# on the local cluster, once under stock select/cons_tres and once under
# select/cons_tres_nvlplace, compared test by test (a benchmark, not CI: about 25 minutes per
# release on 2 cores; needs root and expect).
# Usage: contrib/bench/slurm_testsuite.sh [--release VERSION]... [--tests 'TEST...']
#            [--modes cons_tres,nvlplace] [--testsuite DIR] [--timeout SECONDS]
#            [--topology FILE] [--work DIR] [--out DIR]
# --release    a Slurm release built by contrib/slurm/release.sh (repeat or comma-separate;
#              default 24.11.7 and 26.05.3); its plugins from BUILD/plugin/slurm-VERSION/lib
# --tests      test names or globs of the expect testsuite ('test39.* test1.62'); default
#              the list in this script (DEFAULT_TESTS, with why each is there)
# --modes      cons_tres (stock), nvlplace, or both (default, in that order)
# --testsuite  a Slurm testsuite folder (holding expect/globals) for a release whose source
#              has none: from 25.11 SchedMD ships it on master only ("can be used against
#              different releases"), e.g. `git clone https://github.com/SchedMD/slurm` and
#              --testsuite slurm/testsuite; default $NVLPLACE_SLURM_TESTSUITE. A release's own
#              src/testsuite/expect is used when it has one.
# --timeout    per test (default 420 s; the longest chosen test takes about 160 s)
# --topology   cluster YAML (default configs/lab-h100.yaml: 8 nodes of 8 fake GPUs)
# --work       scratch: private copies of the plugins and the CLI (the build tree may be
#              rebuilt meanwhile), the cluster (default /tmp/nvl-testsuite)
# --out        results (default BUILD/slurm-testsuite): OUT/VERSION/MODE/results.tsv (test,
#              result, counts, seconds, reason, cleanup), logs/TEST.log, slurmctld.log,
#              placements (nvlplace: its placement lines by event);
#              OUT/VERSION/table.md (slurm_testsuite.py table, with the explanations of
#              contrib/bench/slurm_testsuite_notes.tsv), OUT/VERSION/about.txt.
# The testsuite is built once per release into RELEASE/build/nvlplace-testsuite (a copy of
# its expect folder; the tests compile their own programs against the release's prefix as
# they run) and pointed at the cluster by globals.local and testsuite.conf. globals.local
# also lets check_config_select accept select/cons_tres_nvlplace for "cons_tres" (Slurm
# itself tells cons_tres by a substring of SelectType; the testsuite compares the whole
# name and would skip every cons_tres test under the plugin). After each test its jobs and
# reservations are removed and drained nodes resumed (the cleanup column says what was
# left). Environment: NVLPLACE_BUILD_DIR (default build), NVLPLACE_PORT_BASE (default 29000).
# Exit 1 when a difference between the modes has no explanation in the notes file.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
usage() { sed -n '3,37p' "$0" | sed 's/^# \{0,1\}//'; }
bad() { echo "slurm_testsuite.sh: $*" >&2; usage >&2; exit 2; }

# The chosen tests (about 12 minutes per mode on 2 cores); names absent from a release's
# testsuite are reported as MISSING in both modes.
DEFAULT_TESTS=(
  # GPUs through the gres/gpu and cons_tres options: every test39 (--gpus*, --cpus-per-gpu,
  # --mem-per-gpu, --gpu-bind, heterogeneous jobs, a load of many GPU jobs).
  'test39.*'
  # GRES elsewhere: srun --gres, --ntasks-per-gpu, changing a node's GRES count, the gres
  # config parser, node sharing with GPUs.
  test1.62 test1.119 test3.18 test7.17 test17.17
  # cons_tres allocation: steps and --exclusive, --overlap, -c, --ntasks-per-node,
  # --contiguous, --use-min-nodes, --spread-job, --mem/--mincpus, --mem-per-cpu, task and
  # node counts, --overcommit, core and thread specialisation, node estimation, sinfo's
  # allocated CPUs, the resource layout a job gets.
  test1.14 test1.12 test1.84 test1.97 test1.83 test1.113 test1.114 test1.23 test1.117 test1.2
  test1.81 test15.7 test15.21 test15.24 test15.27 test15.39 test17.10 test17.11 test17.32
  test17.34 test17.40 test17.63 test4.12 test5.11 test7.7
  # Scheduling and the other select entry points: will-run (--test-only), reservations with
  # cores and their replacement, suspend/resume, growing and shrinking a running job, steps
  # inside an allocation.
  test1.43 test3.11 test3.14 test3.7 test2.14 test2.15 test1.35 test1.85 test1.86
)
# Left out: tests that edit slurm.conf or restart daemons (test7.23, test17.36, test3.15,
# ...: they would drop the plugin's JobSubmitPlugins line), kill every srun of the user
# (test1.59), need accounting (test21.*, test5.9) or are long without touching selection
# (test9.9, test17.12, test1.69).

releases=()
tests=()
modes=cons_tres,nvlplace
testsuite=${NVLPLACE_SLURM_TESTSUITE:-}
timeout=420
topology=$root/configs/lab-h100.yaml
work=/tmp/nvl-testsuite
build=${NVLPLACE_BUILD_DIR:-$root/build}
out=
while (($#)); do
  case $1 in
    --release) [[ -n ${2:-} ]] || bad "--release needs a VERSION"; IFS=', ' read -ra v <<<"$2"
      releases+=("${v[@]}"); shift 2 ;;
    --tests) [[ -n ${2:-} ]] || bad "--tests needs test names"; read -ra v <<<"${2//,/ }"
      tests+=("${v[@]}"); shift 2 ;;
    --modes) modes=${2:-}; shift 2 || shift ;;
    --testsuite) testsuite=${2:-}; shift 2 || shift ;;
    --timeout) timeout=${2:-}; shift 2 || shift ;;
    --topology) topology=${2:-}; shift 2 || shift ;;
    --work) work=${2:-}; shift 2 || shift ;;
    --out) out=${2:-}; shift 2 || shift ;;
    -h|--help) usage; exit 0 ;;
    *) bad "unknown argument $1" ;;
  esac
done
((${#releases[@]})) || releases=(24.11.7 26.05.3)
((${#tests[@]})) || tests=("${DEFAULT_TESTS[@]}")
for v in "${releases[@]}"; do
  [[ $v =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || bad "--release takes a version such as 24.11.7, not '$v'"
done
test_re='^test[][0-9*?.-]+$'
for t in "${tests[@]}"; do
  [[ $t =~ $test_re ]] || bad "--tests takes expect test names or globs (test39.*), not '$t'"
done
[[ $modes =~ ^(cons_tres|nvlplace)(,(cons_tres|nvlplace))?$ ]] || bad "--modes: cons_tres, nvlplace"
IFS=, read -ra modes <<<"$modes"
[[ $timeout =~ ^[1-9][0-9]*$ ]] || bad "--timeout takes whole seconds"
[[ -f $topology ]] || bad "--topology: no file $topology"
[[ -n $work && -n $build ]] || bad "--work needs a directory"
[[ -z $testsuite || -f $testsuite/expect/globals ]] ||
  bad "--testsuite: $testsuite has no expect/globals (give Slurm's testsuite/ folder)"
fatal() { echo "slurm_testsuite.sh: $*" >&2; exit 2; }
[[ $(id -u) -eq 0 ]] || fatal "run as root (start.sh starts a slurmd per node)"
command -v expect >/dev/null || fatal "no expect; apt-get install expect (contrib/setup.sh does)"
[[ -x $build/contrib/nvlplace ]] || fatal "no nvlplace CLI at $build/contrib/nvlplace; build first"
[[ -n $out ]] || out=$build/slurm-testsuite
topology=$(realpath "$topology")
mkdir -p "$out" "$work"
out=$(cd "$out" && pwd)
work=$(cd "$work" && pwd)
report=$here/slurm_testsuite.py
notes=$here/slurm_testsuite_notes.tsv
log() { echo "slurm_testsuite: $*" >&2; }

exec 8>"$work/lock"
flock -n 8 || fatal "another run holds $work/lock"

# The cluster's settings for start.sh, stop.sh and clean.sh (contrib/cluster/common.sh).
export NVLPLACE_CLUSTER_DIR=$work/cluster
export NVLPLACE_PORT_BASE=${NVLPLACE_PORT_BASE:-29000}
export NVLPLACE_BUILD_DIR=$work/build
cluster_up=0  # 1 while a cluster of this run may be up: the EXIT trap removes it
trap '((!cluster_up)) || "$root/contrib/cluster/clean.sh" >/dev/null 2>&1 || true' EXIT
trap 'exit 130' INT TERM

# A private copy of the CLI: start.sh runs it from NVLPLACE_BUILD_DIR/contrib.
mkdir -p "$work/build/contrib"
cp -p "$build/contrib/nvlplace" "$work/build/contrib/nvlplace.new"
mv -f "$work/build/contrib/nvlplace.new" "$work/build/contrib/nvlplace"

# build_testsuite RELEASE_DIR SOURCE: prints the release's testsuite copy, made once (again
# when SOURCE changed).
build_testsuite() {
  local dir=$1 source=$2 ts=$1/build/nvlplace-testsuite stamp prefix=$1/prefix commit
  if commit=$(git -C "$source" rev-parse HEAD 2>/dev/null); then
    stamp="$source (git $commit)"
  else
    stamp="$source (globals $(sha256sum "$source/globals" | cut -c1-16))"
  fi
  if [[ ! -f $ts/stamp || $(cat "$ts/stamp") != "$stamp" ]]; then
    log "building the testsuite of $(basename "$dir") from $source"
    rm -rf "$ts"
    mkdir -p "$ts"
    cp -a "$source" "$ts/expect"
    rm -f "$ts/expect/globals.local"
    # The tests compile their programs against the release as they run: fail here, once,
    # if that cannot work.
    printf '#include <slurm/slurm.h>\nint main(void) { return slurm_api_version() ? 0 : 1; }\n' \
      >"$ts/check.c"
    if ! gcc -I"$prefix/include" "$ts/check.c" -o "$ts/check" -L"$prefix/lib" \
         -Wl,-rpath="$prefix/lib" -lslurm 2>"$ts/check.out" || ! "$ts/check"; then
      log "cannot compile against $prefix (the tests do): $(tail -3 "$ts/check.out")"
      return 1
    fi
    echo "$stamp" >"$ts/stamp"
  fi
  echo "$ts"
}

# write_config TS RELEASE_DIR RUN_DIR: globals.local and testsuite.conf of one run.
write_config() {
  local ts=$1 dir=$2 run=$3
  cat >"$ts/testsuite.conf" <<EOF
SlurmSourceDir=$dir/src
SlurmBuildDir=$dir/build
SlurmInstallDir=$dir/prefix
SlurmConfigDir=$NVLPLACE_CLUSTER_DIR/etc
EOF
  cat >"$ts/expect/globals.local" <<EOF
# Written by nvlplace's contrib/bench/slurm_testsuite.sh for $run.
set slurm_dir "$dir/prefix"
set build_dir "$dir/build"
set src_dir "$dir/src"
set testsuite_shared_dir "$run/work"
set testsuite_colorize false
set testsuite_subtest_details fail_skip
set testsuite_testproc_details fail_skip
# select/cons_tres_nvlplace is cons_tres with a placement step, and Slurm tells cons_tres by a
# substring of SelectType; check_config_select compares the whole name. Once globals has
# defined it (this file is sourced first), a wrapper accepts the plugin for "cons_tres".
proc _nvl_wrap_check_config_select {args} {
	if {[info procs check_config_select] eq "" || [info procs _nvl_check_config_select] ne ""} {
		return
	}
	rename check_config_select _nvl_check_config_select
	proc check_config_select {type} {
		if {\$type eq "cons_tres" && [get_config_param "SelectType"] eq "select/cons_tres_nvlplace"} {
			return true
		}
		return [_nvl_check_config_select \$type]
	}
}
trace add execution source leave _nvl_wrap_check_config_select
EOF
}

# The tests of the testsuite at TS matching the --tests globs, in order, each once; a name
# without a match is printed as is (reported MISSING).
select_tests() {
  local ts=$1 pat f found
  declare -A seen=()
  for pat in "${tests[@]}"; do
    found=0
    while read -r f; do
      found=1
      [[ -z ${seen[$f]:-} ]] || continue
      seen[$f]=1
      echo "$f"
    done < <(cd "$ts/expect" && for f in $pat; do
               [[ -f $f && $f =~ ^test[0-9]+\.[0-9]+$ ]] && echo "$f"; done | sort -t. -k2,2n)
    # A plain name that is not there: one MISSING row.
    if ((!found)) && [[ $pat != *[*?[]* && -z ${seen[$pat]:-} ]]; then
      seen[$pat]=1
      echo "$pat"
    fi
  done
}

# Puts the cluster back as start.sh left it; prints what it had to do ("-" when nothing).
reset_cluster() {
  local did=() ids res nodes n deadline
  if ! scontrol ping 2>/dev/null | grep 'is UP' >/dev/null; then
    "$root/contrib/cluster/start.sh" --topology "$topology" --select "$mode" \
      >>"$run/start.log" 2>&1
    did+=("restarted the cluster")
  fi
  ids=$(squeue -h -o %i 2>/dev/null || true)
  if [[ -n $ids ]]; then
    # shellcheck disable=SC2086
    scancel $ids 2>/dev/null || true
    did+=("cancelled $(wc -w <<<"$ids") jobs")
    deadline=$((SECONDS + 60))
    while [[ -n $(squeue -h -o %i 2>/dev/null) ]] && ((SECONDS < deadline)); do sleep 0.5; done
  fi
  res=$(scontrol -o show reservation 2>/dev/null | sed -n 's/^ReservationName=\([^ ]*\) .*/\1/p')
  for n in $res; do scontrol delete reservationname="$n" 2>/dev/null || true; done
  [[ -z $res ]] || did+=("deleted reservation ${res//$'\n'/ }")
  deadline=$((SECONDS + 30))
  while :; do
    nodes=$(sinfo -h -N -o '%N %t' 2>/dev/null | awk '$2 != "idle" { print $1 }' | sort -u)
    if [[ -z $nodes ]] || ((SECONDS >= deadline)); then break; fi
    # Drained or down by a test: resume; completing: wait.
    for n in $(sinfo -h -N -t drain,down -o '%N' 2>/dev/null | sort -u); do
      scontrol update nodename="$n" state=resume 2>/dev/null && did+=("resumed $n")
    done
    sleep 1
  done
  [[ -z $nodes ]] || did+=("not idle: ${nodes//$'\n'/ }")
  if ((${#did[@]})); then (IFS=';'; echo "${did[*]}"); else echo -; fi
}

# What the plugin did with the jobs of the tests, from its placement lines in slurmctld's log
# (plugin/README.md "The placement line"): the count of each event; a run where it placed
# nothing would compare cons_tres with itself.
placements() {
  local event n counts=()
  for event in placed differs placed-by-cons_tres rejected waiting held refused; do
    n=$(python3 "$root/contrib/cluster/placement_log.py" --log "$1" --job '*' --count \
      "event=$event")
    ((n == 0)) || counts+=("$event=$n")
  done
  echo "nvlplace placement lines: ${counts[*]:-none}"
}

# run_mode VERSION RELEASE_DIR TS MODE: one cluster, every test; OUT/VERSION/MODE.
run_mode() {
  local version=$1 dir=$2 ts=$3 test rc start result counts reason secs left
  mode=$4
  run=$out/$version/$mode
  rm -rf "$run"
  mkdir -p "$run/logs" "$run/work"
  "$root/contrib/cluster/clean.sh" >/dev/null 2>&1 || true
  cluster_up=1
  local t0=$SECONDS
  "$root/contrib/cluster/start.sh" --topology "$topology" --select "$mode" >"$run/start.log" 2>&1 ||
    { log "$version $mode: the cluster did not start: $(tail -3 "$run/start.log")"; return 1; }
  # shellcheck disable=SC1091
  source "$NVLPLACE_CLUSTER_DIR/env.sh"
  write_config "$ts" "$dir" "$run"
  export SLURM_TESTSUITE_CONF=$ts/testsuite.conf
  printf 'test\tresult\tcounts\tseconds\treason\tcleanup\n' >"$run/results.tsv"
  left=$(reset_cluster)
  while read -r test; do
    if [[ ! -f $ts/expect/$test ]]; then
      printf '%s\tMISSING\t-\t0\tnot in this testsuite\t-\n' "$test" >>"$run/results.tsv"
      continue
    fi
    start=$SECONDS
    rc=0
    (cd "$ts/expect" && exec timeout -k 10 "$timeout" expect -- "$test") \
      </dev/null >"$run/logs/$test.log" 2>&1 || rc=$?
    IFS=$'\t' read -r result counts reason \
      < <(python3 "$report" result --log "$run/logs/$test.log" --rc "$rc")
    secs=$((SECONDS - start))
    left=$(reset_cluster)
    printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$test" "$result" "$counts" "$secs" "$reason" "$left" \
      >>"$run/results.tsv"
    log "$version $mode $test: $result $counts ${secs} s${reason:+: $reason}"
  done < <(select_tests "$ts")
  cp "$NVLPLACE_CLUSTER_DIR/log/slurmctld.log" "$run/slurmctld.log" 2>/dev/null || true
  [[ $mode != nvlplace ]] || placements "$run/slurmctld.log" >"$run/placements"
  "$root/contrib/cluster/clean.sh" >/dev/null 2>&1 || true
  # shellcheck disable=SC2034  # read by the EXIT trap
  cluster_up=0
  echo "$((SECONDS - t0))" >"$run/seconds"
  log "$version $mode: $(($(wc -l <"$run/results.tsv") - 1)) tests in $((SECONDS - t0)) s"
}

status=0
summary=()
for version in "${releases[@]}"; do
  v0=$SECONDS
  if ! dir=$("$root/contrib/slurm/release.sh" --dir "$version") ||
     [[ ! -x $dir/prefix/sbin/slurmctld ]]; then
    log "Slurm $version is not installed (contrib/slurm/release.sh $version): skipped"
    status=1
    continue
  fi
  source_dir=$dir/src/testsuite/expect
  if [[ ! -f $source_dir/globals ]]; then
    if [[ -z $testsuite ]]; then
      log "Slurm $version's source has no expect testsuite; give --testsuite (--help): skipped"
      status=1
      continue
    fi
    source_dir=$(cd "$testsuite/expect" && pwd)
  fi
  plugins=$build/plugin/slurm-$version/lib
  for f in select_cons_tres_nvlplace.so spank_nvlplace.so job_submit_nvlplace.so; do
    [[ -f $plugins/$f ]] || { log "no $plugins/$f: build the plugin for $version first"; exit 1; }
  done
  # A private copy: another build may replace them while this runs.
  export NVLPLACE_PLUGIN_LIB=$work/plugins-$version
  rm -rf "$NVLPLACE_PLUGIN_LIB"
  mkdir -p "$NVLPLACE_PLUGIN_LIB"
  cp -p "$plugins"/*.so "$NVLPLACE_PLUGIN_LIB/"
  export NVLPLACE_SLURM_PREFIX=$dir/prefix
  ts=$(build_testsuite "$dir" "$source_dir") || { status=1; continue; }
  mkdir -p "$out/$version"
  {
    echo "Slurm $version: $dir"
    echo "testsuite: $(cat "$ts/stamp")"
    echo "nvlplace: $(git -C "$root" rev-parse HEAD 2>/dev/null || echo -)$(
      git -C "$root" diff --quiet HEAD -- plugin placement 2>/dev/null ||
        echo ' (plugin/ or placement/ modified)'), plugins:"
    (cd "$NVLPLACE_PLUGIN_LIB" && sha256sum ./*.so)
    echo "topology: $topology; timeout $timeout s; port base $NVLPLACE_PORT_BASE"
    echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
    echo "tests: ${tests[*]}"
    echo "modes: ${modes[*]}"
  } >"$out/$version/about.txt"
  for m in "${modes[@]}"; do run_mode "$version" "$dir" "$ts" "$m" || status=1; done
  secs=$((SECONDS - v0))
  summary+=("Slurm $version: $((secs / 60)) min $((secs % 60)) s")
  if [[ -f $out/$version/cons_tres/results.tsv && -f $out/$version/nvlplace/results.tsv ]]; then
    python3 "$report" table --release "$version" --stock "$out/$version/cons_tres/results.tsv" \
      --plugin "$out/$version/nvlplace/results.tsv" --notes "$notes" >"$out/$version/table.md" ||
      status=1
    echo
    echo "## Slurm $version: its expect tests under stock cons_tres and under nvlplace"
    echo
    echo "Testsuite: $(cat "$ts/stamp")."
    [[ ! -f $out/$version/nvlplace/placements ]] || cat "$out/$version/nvlplace/placements"
    echo
    cat "$out/$version/table.md"
  fi
done
echo
printf '%s\n' "${summary[@]}"
exit "$status"
