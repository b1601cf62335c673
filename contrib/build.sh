#!/bin/sh
# Configures and builds nvlplace into build/ (or $NVLPLACE_BUILD_DIR). Set NVLPLACE_SANITIZE=1
# for an ASan+UBSan build. A full build (no arguments) then builds the libFuzzer targets into
# $BUILD/fuzz, a clang tree (tests/fuzz/), when clang is installed and not for NVLPLACE_SANITIZE.
# The Slurm plugins are built for the installed Slurm and for every release of
# contrib/slurm/releases found built (plugin/slurm-<version>/lib).
# Builds hold a lock so that two never share the machine's cores.
# Usage: contrib/build.sh [--target TARGET...]   (default: everything)
set -eu
usage() { sed -n '2,10p' "$0"; }
case ${1:-} in
  -h|--help) usage; exit 0 ;;
esac
if [ $# -gt 0 ]; then
  if [ "$1" != --target ] || [ $# -lt 2 ]; then
    echo "build.sh: unknown arguments: $*" >&2; usage >&2; exit 2
  fi
  for t in "$@"; do
    case $t in
      --target) ;;
      -*|'') echo "build.sh: unknown argument $t" >&2; usage >&2; exit 2 ;;
    esac
  done
fi
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${NVLPLACE_BUILD_DIR:-$ROOT/build}
JOBS=${NVLPLACE_JOBS:-$(nproc)}
SANITIZE=OFF
if [ "${NVLPLACE_SANITIZE:-0}" = 1 ]; then SANITIZE=ON; fi
FUZZ=true
if [ $# = 0 ] && [ $SANITIZE = OFF ] && command -v clang >/dev/null && command -v clang++ >/dev/null; then
  FUZZ="CC=clang CXX=clang++ cmake -S '$ROOT' -B '$BUILD/fuzz' -DNVLPLACE_FUZZ=ON \
    -DNVLPLACE_BUILD_TESTS=OFF -DNVLPLACE_BUILD_BENCH=OFF -DNVLPLACE_BUILD_PLUGIN=OFF >/dev/null &&
    cmake --build '$BUILD/fuzz' -j$JOBS --target nvl_fuzz"
fi
# The plugins also for every other Slurm release already built or configured
# (contrib/slurm/releases, made by `contrib/setup.sh --slurm-releases`).
RELEASES=
if [ $SANITIZE = OFF ]; then
  for v in $(grep -v '^#' "$ROOT/contrib/slurm/releases" | awk '{ print $1 }'); do
    if d=$("$ROOT/contrib/slurm/release.sh" --dir "$v"); then RELEASES="$RELEASES${RELEASES:+;}$d"; fi
  done
fi
flock /tmp/nvlplace-build.lock sh -c "
  cmake -S '$ROOT' -B '$BUILD' -DNVLPLACE_SANITIZE=$SANITIZE '-DNVLPLACE_SLURM_RELEASES=$RELEASES' >/dev/null &&
  cmake --build '$BUILD' -j$JOBS $* &&
  $FUZZ"
