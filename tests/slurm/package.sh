#!/bin/bash
# The Debian packages as an administrator installs them: `cpack -G DEB` in the build tree
# makes nvlplace and nvlplace-slurm-plugin, `apt-get install ./*.deb` installs them on this
# machine (no download: their dependencies are Debian's Slurm and the libraries the build
# used), and a cluster whose PluginDir is Slurm's own plugin directory only loads the
# installed plugin and places a strict TP job inside one NVLink island. Whatever happens,
# the cluster is removed and both packages are purged on exit: the other clusters never
# load an installed nvlplace .so (start.sh links Slurm's plugins without it), but nothing
# is left installed behind a test.
set -uo pipefail
build=${NVLPLACE_BUILD_DIR:?NVLPLACE_BUILD_DIR (the build tree) is needed}
# Its own cluster: run directory and ports (150 above the suite's, below the next suite's).
export NVLPLACE_CLUSTER_DIR=$build/tests/slurm/cluster-package
export NVLPLACE_PORT_BASE=$((${NVLPLACE_PORT_BASE:-28100} + 150))
export NVLPLACE_PLUGIN_LIB=/usr/lib/x86_64-linux-gnu/slurm-wlm
source "$(dirname "$0")/lib.sh"

[[ $(id -u) -eq 0 ]] || skip "needs root (apt-get install)"
command -v apt-get >/dev/null && command -v dpkg >/dev/null && command -v cpack >/dev/null ||
  skip "needs apt-get, dpkg and cpack"
[[ -n ${NVLPLACE_SLURM_PREFIX:-} ]] && skip "packages are made for Debian's own Slurm only"
grep -q 'nvlplace-slurm-plugin' "$build/CPackConfig.cmake" 2>/dev/null ||
  skip "no plugin package configured (the plugin is not built against Debian's Slurm)"

packages=(nvlplace nvlplace-slurm-plugin)
cleanup() {
  "$NVL_ROOT/contrib/cluster/clean.sh" >/dev/null 2>&1
  dpkg --purge "${packages[@]}" >/dev/null 2>&1
}
trap cleanup EXIT
installed() { dpkg-query -W -f='${Status}\n' "$1" 2>/dev/null | grep -q '^install ok installed'; }
for p in "${packages[@]}"; do
  installed "$p" && fail "$p is installed before the test: remove it first (dpkg --purge $p)"
done

debs=$build/packages
rm -rf "$debs"
mkdir -p "$NVL_TEST_OUT"
(cd "$build" && cpack -G DEB -B "$debs" >"$NVL_TEST_OUT/cpack.out" 2>&1) ||
  fail "cpack failed: $(tail -5 "$NVL_TEST_OUT/cpack.out" 2>/dev/null)"
mapfile -t files < <(ls "$debs"/*.deb 2>/dev/null)
((${#files[@]} == 2)) || fail "cpack made ${#files[@]} packages, not 2: ${files[*]}"
depends=$(dpkg-deb -f "$debs"/nvlplace-slurm-plugin_*.deb Depends)
slurm_version=$(dpkg-query -W -f='${Version}' slurm-wlm-basic-plugins)
[[ $depends == *"slurm-wlm-basic-plugins (= $slurm_version)"* ]] ||
  fail "the plugin package depends on '$depends', not on exactly slurm-wlm-basic-plugins $slurm_version"

# Nothing but the two packages: their dependencies are on this machine already.
apt-get install -s "${files[@]}" >"$NVL_TEST_OUT/apt.out" 2>&1 ||
  fail "apt-get cannot install ${files[*]}: $(tail -5 "$NVL_TEST_OUT/apt.out")"
extra=$(awk '$1 == "Inst" && $2 != "nvlplace" && $2 != "nvlplace-slurm-plugin" { print $2 }' "$NVL_TEST_OUT/apt.out")
[[ -z $extra ]] || fail "installing the packages would also install: $extra"
if ! apt-get install -y "${files[@]}" >"$NVL_TEST_OUT/apt.out" 2>&1; then
  fail "apt-get install of ${files[*]} failed: $(tail -5 "$NVL_TEST_OUT/apt.out")"
fi
for p in "${packages[@]}"; do installed "$p" || fail "$p not installed"; done
for so in select_cons_tres_nvlplace spank_nvlplace job_submit_nvlplace; do
  dpkg -L nvlplace-slurm-plugin | grep -x "$NVLPLACE_PLUGIN_LIB/$so.so" >/dev/null ||
    fail "$so.so is not in $NVLPLACE_PLUGIN_LIB: $(dpkg -L nvlplace-slurm-plugin | grep '\.so$')"
done
cli=$(dpkg -L nvlplace | grep '/bin/nvlplace$') || fail "no nvlplace command in the package"
"$cli" validate "$NVL_TOPOLOGY" >/dev/null || fail "$cli validate failed"

mark=0
use_cluster nvlplace
ctld=$(nvl_pid_of "$NVL_RUN/run/slurmctld.pid") || fail "no slurmctld"
grep -F "$NVLPLACE_PLUGIN_LIB/select_cons_tres_nvlplace.so" "/proc/$ctld/maps" >/dev/null ||
  fail "slurmctld did not map the installed $NVLPLACE_PLUGIN_LIB/select_cons_tres_nvlplace.so"
log_has "$mark" "select/cons_tres_nvlplace built for Slurm ${slurm_version%%-*} loaded over cons_tres" ||
  fail "no load line of the installed select plugin for Slurm ${slurm_version%%-*}"
log_has "$mark" "nvlplace: loaded $NVL_RUN/etc/nvlplace.yaml" || fail "nvlplace.yaml not loaded"
job=$(submit --gpus=4 --nvl-tp=4)
wait_state "$job" RUNNING
got=$(nvl_job_gpus "$job" | paste -sd' ')
gpus_in_one_island "$got" || fail "job $job split over islands: $got"
comment_has "$job" event=placed asked_gpus=4 tp=4 pp=1 dp=1 nvl=strict span_domains=1 ||
  fail "job $job: $(job_comment "$job")"
note "installed packages: $(for f in "${files[@]}"; do echo -n "${f##*/} ($(stat -c %s "$f") bytes) "; done); job $job on $got"

cleanup
for p in "${packages[@]}"; do installed "$p" && fail "$p still installed after dpkg --purge"; done
[[ -e $NVLPLACE_PLUGIN_LIB/select_cons_tres_nvlplace.so ]] && fail "the select .so is left behind"
note "ok"
