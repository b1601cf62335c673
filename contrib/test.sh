#!/bin/sh
# The whole test suite: set-up, one build, then every test through ctest (unit, golden CLI,
# real-Slurm integration). Usage: contrib/test.sh [ctest arguments, e.g. -L unit]
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${NVLPLACE_BUILD_DIR:-$ROOT/build}
"$ROOT/contrib/setup.sh" --slurm-releases
"$ROOT/contrib/build.sh"
cd "$BUILD"
ctest --output-on-failure --no-tests=error -j"$(nproc)" "$@"
