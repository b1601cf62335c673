#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Every C and C++ source of the project is clang-format clean (.clang-format at the root).
# Fails naming each file that is not, with the command that fixes it. Slurm's own sources
# (third_party/) and build trees are not ours and are skipped.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
command -v clang-format >/dev/null || { echo "format: clang-format not installed (contrib/setup.sh installs it)"; exit 1; }
files=$(find placement policies plugin contrib tests -type f \
          \( -name '*.cc' -o -name '*.h' -o -name '*.c' \) | sort)
bad=""
for f in $files; do
  clang-format --dry-run --Werror "$f" >/dev/null 2>&1 || bad="$bad $f"
done
if [ -n "$bad" ]; then
  echo "not clang-format clean:$bad"
  echo "fix with: clang-format -i$bad"
  exit 1
fi
echo "format: $(echo "$files" | wc -l) files clean"
