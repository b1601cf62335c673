#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The engine's sources (placement/engine/*.cc, tests aside) are clean under the checks of
# the root .clang-tidy. Usage: tidy_test.sh BUILD_DIR (holding compile_commands.json).
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$1
command -v clang-tidy >/dev/null || { echo "tidy: clang-tidy not installed (contrib/setup.sh installs it)"; exit 1; }
[ -f "$build/compile_commands.json" ] || { echo "tidy: no $build/compile_commands.json"; exit 1; }
cd "$root"
status=0
for f in placement/engine/*.cc; do
  case $f in *_test.cc) continue ;; esac
  clang-tidy -p "$build" --quiet "$f" 2>/dev/null || { echo "tidy: $f has findings (above)"; status=1; }
done
[ $status -eq 0 ] && echo "tidy: placement/engine clean"
exit $status
