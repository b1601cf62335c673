#!/bin/sh
# The whole test suite: set-up, one build, then every test through ctest (unit, golden CLI,
# real-Slurm integration). Usage: contrib/test.sh [ctest arguments, e.g. -L unit]
set -eu
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
