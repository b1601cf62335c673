#!/bin/bash
# Builds one Slurm release from its unmodified release tarball into a prefix outside the
# clone, once: the prefix is keyed by version and the tarball's SHA-256, and a finished
# build is reused (a second call prints its directory and does nothing else).
#
# Usage: contrib/slurm/release.sh [--configure-only | --dir] VERSION
#
# Prints, as its last line, the release's directory, which holds
#   src/      the release source (for slurmctld.h and the other internal headers)
#   build/    the out-of-tree configure (config.h, slurm/slurm_version.h) and make
#   prefix/   the installed daemons, commands and plugins (not with --configure-only)
# --configure-only  configure only: enough to compile the nvlplace plugins and check their
#                   symbols against that release (23.11 and 25.11 in CI).
# --dir             build nothing: print the directory if the release is configured (or
#                   installed), else exit 1.
# Environment:
#   NVLPLACE_SLURM_TARBALLS  folder with slurm-VERSION.tar.gz and SHA256SUMS
#                            (default: ../shared/slurm beside the clone)
#   NVLPLACE_SLURM_CACHE     where releases are built (default /var/cache/nvlplace/slurm as
#                            root, else ~/.cache/nvlplace/slurm)
# Exit 77 when the tarball is not there (callers skip that release), 1 on a failed build.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
usage() { sed -n '2,21p' "$0"; }
configure_only=0
dir_only=0
case ${1:-} in
  -h|--help) usage; exit 0 ;;
  --configure-only) configure_only=1; shift ;;
  --dir) dir_only=1; shift ;;
esac
if [[ $# -ne 1 || ! $1 =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]]; then
  echo "release.sh: give one VERSION, e.g. 24.11.7: $*" >&2
  usage >&2
  exit 2
fi
version=$1

tarballs=${NVLPLACE_SLURM_TARBALLS:-$root/../shared/slurm}
if [[ $(id -u) -eq 0 ]]; then cache_default=/var/cache/nvlplace/slurm
else cache_default=${XDG_CACHE_HOME:-$HOME/.cache}/nvlplace/slurm; fi
cache=${NVLPLACE_SLURM_CACHE:-$cache_default}
tarball=$tarballs/slurm-$version.tar.gz
if [[ ! -f $tarball || ! -f $tarballs/SHA256SUMS ]]; then
  ((dir_only)) && exit 1
  echo "release.sh: no $tarball (or no SHA256SUMS beside it); set NVLPLACE_SLURM_TARBALLS" >&2
  exit 77
fi
want=$(awk -v f="slurm-$version.tar.gz" '$2 == f || $2 == "*" f { print $1 }' "$tarballs/SHA256SUMS")
[[ -n $want ]] || { echo "release.sh: $tarballs/SHA256SUMS has no line for slurm-$version.tar.gz" >&2; exit 1; }
dir=$cache/$version-${want:0:16}
# The configure arguments, kept in the `configured` stamp: a release configured with other
# ones (an older release.sh: no MySQL for slurmdbd) is configured and built again.
# --enable-multiple-slurmd: one host runs a slurmd per node (`slurmd -N name`).
# --disable-static, --disable-slurmrestd: nothing here links libslurm.a or talks REST, and
# libtool otherwise compiles each of libslurm's sources twice (PIC and not); on a fresh
# machine the release builds are most of CI's set-up.
# --with-mysql_config: slurmdbd's accounting_storage/mysql (the local cluster's --accounting).
args=(--prefix="$dir/prefix" --sysconfdir="$dir/prefix/etc" --enable-multiple-slurmd
  --disable-static --disable-slurmrestd --with-munge --with-json --with-yaml
  --with-mysql_config=/usr/bin)
configured() { [[ -f $dir/configured && $(cat "$dir/configured") == "${args[*]}" ]]; }
done_already() {
  configured || return 1
  [[ -f $dir/installed ]] || ((configure_only))
}
if ((dir_only)); then
  [[ -f $dir/configured ]] || exit 1
  echo "$dir"
  exit 0
fi
if done_already; then
  echo "$dir"
  exit 0
fi

mkdir -p "$dir"
exec 9>"$dir.lock"
flock 9  # one build of a release at a time; the second caller then finds it done
if done_already; then
  echo "$dir"
  exit 0
fi
log() { echo "release.sh: Slurm $version: $*" >&2; }

have=$(sha256sum "$tarball" | cut -d' ' -f1)
[[ $have == "$want" ]] || { log "$tarball has SHA-256 $have, SHA256SUMS says $want"; exit 1; }
start=$SECONDS
if [[ ! -f $dir/src/META ]]; then
  rm -rf "$dir/src" && mkdir -p "$dir/src"
  tar -xzf "$tarball" -C "$dir/src" --strip-components=1
fi
if ! configured; then
  [[ -x /usr/bin/mysql_config ]] ||
    { log "no /usr/bin/mysql_config: install libmariadb-dev-compat (contrib/setup.sh)"; exit 1; }
  rm -rf "$dir/build" "$dir/installed" "$dir/configured" && mkdir -p "$dir/build"
  log "configure (log: $dir/build/configure.out)"
  (cd "$dir/build" && "$dir/src/configure" "${args[@]}" >configure.out 2>&1) ||
    { log "configure failed: $(tail -5 "$dir/build/configure.out")"; exit 1; }
  echo "${args[*]}" >"$dir/configured"
fi
if ((!configure_only)); then
  jobs=$(nproc)
  log "make -j$jobs (log: $dir/build/make.out)"
  # The machine's build lock (contrib/build.sh holds it too): two builds never share the cores.
  flock /tmp/nvlplace-build.lock make -C "$dir/build" -j"$jobs" >"$dir/build/make.out" 2>&1 ||
    { log "make failed: $(tail -5 "$dir/build/make.out")"; exit 1; }
  rm -rf "$dir/prefix"
  make -C "$dir/build" install >"$dir/build/install.out" 2>&1 ||
    { log "make install failed: $(tail -5 "$dir/build/install.out")"; exit 1; }
  echo "$((SECONDS - start)) s" >"$dir/installed"
  log "built and installed in $((SECONDS - start)) s"
else
  log "configured in $((SECONDS - start)) s"
fi
echo "$dir"
