#!/bin/sh
# Golden helper: runs `nvlplace replay ARGS... --out DIR` (ARGS starting with replay) ($NVLPLACE_BIN) and prints the
# per-job decisions it wrote (jobs.csv), so that a change in any decision shows as a diff of
# tests/cli/golden/replay-decisions-*.out (driven by golden.sh).
set -eu
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$NVLPLACE_BIN" "$@" --out "$out" >"$out/stdout" 2>&1 || { cat "$out/stdout"; exit 1; }
cat "$out/jobs.csv"
