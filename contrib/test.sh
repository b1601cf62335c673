#!/bin/sh
# The whole test suite: set-up, one build, then every test through ctest (unit, golden CLI,
# real-Slurm integration). Usage: contrib/test.sh [ctest arguments, e.g. -L unit]
set -eu
usage() { sed -n '2,3p' "$0"; }
for a in "$@"; do
  case $a in -h|--help) usage; exit 0 ;; esac
done
# ctest ignores an option it does not know, and only after the set-up and the build: each
# option must be one of ctest --help's (as itself, before an '=', or a short one with its
# value attached: -j2).
if [ $# -gt 0 ] && command -v ctest >/dev/null; then
  known=$(ctest --help | grep -oE '(^|[ ,])--?[A-Za-z][A-Za-z-]*' | tr -d ' ,' | sort -u)
  for a in "$@"; do
    case $a in
      -*)
        opt=${a%%=*}
        short=$(printf '%s' "$opt" | cut -c1-2)
        if ! printf '%s\n' "$known" | grep -qxF -e "$opt" -e "$short"; then
          echo "test.sh: ctest has no option $a" >&2; usage >&2; exit 2
        fi ;;
    esac
  done
fi
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${NVLPLACE_BUILD_DIR:-$ROOT/build}
"$ROOT/contrib/setup.sh" --slurm-releases
"$ROOT/contrib/build.sh"
cd "$BUILD"
# On a failure, the end of the log names each failed test's cause (a CI page often keeps
# only the end); ctest's exit code stands.
status=0
ctest --output-on-failure --no-tests=error -j"$(nproc)" "$@" || status=$?
if [ $status != 0 ]; then python3 "$ROOT/contrib/tools/failed_tests.py" "$BUILD" || true; fi
exit $status
