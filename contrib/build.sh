#!/bin/sh
# Configures and builds nvlplace into build/ (or $NVLPLACE_BUILD_DIR). Set NVLPLACE_SANITIZE=1
# for an ASan+UBSan build. Builds hold a lock so that two never share the machine's cores.
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${NVLPLACE_BUILD_DIR:-$ROOT/build}
JOBS=${NVLPLACE_JOBS:-$(nproc)}
SANITIZE=OFF
if [ "${NVLPLACE_SANITIZE:-0}" = 1 ]; then SANITIZE=ON; fi
flock /tmp/nvlplace-build.lock sh -c "
  cmake -S '$ROOT' -B '$BUILD' -DNVLPLACE_SANITIZE=$SANITIZE >/dev/null &&
  cmake --build '$BUILD' -j$JOBS $*"
