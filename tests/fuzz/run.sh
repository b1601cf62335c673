#!/bin/sh
# One fuzz target as a ctest test (label fuzz): (a) every seed and every saved finding
# (tests/fuzz/findings/TARGET/) run once as regression inputs, then (b) a bounded, seeded
# fuzzing run from the seeds with a fresh corpus in WORK_DIR (the build tree, never the
# source tree). Fails on any crash, leak, timeout or out-of-memory; prints runs and exec/s.
# Exits 77 (skipped) when the fuzz tree was not built (no clang).
# Usage: run.sh FUZZER TARGET WORK_DIR [NVLPLACE]   (NVLPLACE: the CLI, for Slurm seeds)
set -eu
BIN=$1 TARGET=$2 WORK=$3 NVL=${4:-}
HERE=$(cd "$(dirname "$0")" && pwd)
if [ ! -x "$BIN" ]; then
  echo "fuzz.$TARGET: skipped: no $BIN (contrib/build.sh builds the fuzz tree when clang is installed)"
  exit 77
fi

# The limits, the same for every target (CI: 11 targets x ~25 s on 2 cores, ctest -j2):
# - 20 s of fuzzing each: ~2 min for the label with -j2; enough for 10^4..10^6 runs per target.
# - -timeout=10: one input taking 10 s is a hang or a quadratic blow-up. Inputs are a few KB;
#   the slowest seeds are the bad fixtures that reach a per-file limit with aliases
#   (topology_yaml: alias-names builds 4,194,304 names, alias-visits visits 2^20 YAML values),
#   about 3 s each under ASan on this machine (2.2 s and 3.0 s, 2026-11-25); every other seed
#   takes under a second. A limit whose worst input nears 10 s is too slow, not the timeout.
# - -rss_limit_mb / -malloc_limit_mb=1024: a few KB of input needing 1 GB, or one allocation of
#   1 GB, is a size that was not bounded before allocating; two fuzzers at once stay far below
#   the machine's memory.
# - -seed=1: the same mutations on every run, so that CI results can be reproduced.
LIMITS="-rss_limit_mb=1024 -malloc_limit_mb=1024 -timeout=10"
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

rm -rf "$WORK"
mkdir -p "$WORK/corpus" "$WORK/artifacts"
"$HERE/seeds.sh" "$TARGET" "$WORK/seeds" "$NVL"

# fail LOG WHAT: the end of the log (the sanitizer's report), what failed and how to rerun.
# The log and the artifacts are also kept beside WORK (WORK.failed-TIME), which the next run
# of this test does not remove: a fuzzing run's path depends on timing (hash seeds, exec
# speed), so a finding may not come back on a rerun and must not be lost with the work dir.
fail() {
  tail -n 80 "$1"
  echo "fuzz.$TARGET: FAILED: $2"
  kept=$WORK.failed-$(date +%Y%m%d-%H%M%S)
  mkdir -p "$kept" && cp -r "$1" "$WORK/artifacts" "$kept/" 2>/dev/null &&
    echo "  kept: $kept"
  ls "$WORK/artifacts" 2>/dev/null | sed "s|^|  artifact: $kept/artifacts/|"
  echo "  rerun one input: $BIN FILE; longer runs and saving findings: contrib/fuzz.sh $TARGET"
  exit 1
}

set -- "$WORK"/seeds/*
echo "fuzz.$TARGET: (a) $# seeds, then each saved finding, once"
"$BIN" $LIMITS -artifact_prefix="$WORK/artifacts/" "$@" >"$WORK/seeds.log" 2>&1 ||
  fail "$WORK/seeds.log" "a seed fails (see 'Running:' above)"
failing=
for f in "$HERE/findings/$TARGET"/*; do
  [ -f "$f" ] || continue
  log=$WORK/finding-$(basename "$f").log
  if "$BIN" $LIMITS -artifact_prefix="$WORK/artifacts/" "$f" >"$log" 2>&1; then
    echo "  fixed: $(basename "$f")"
  else
    echo "  still fails: $(basename "$f"): $(grep -a -m1 -E "ERROR:|runtime error|FUZZ_CHECK|terminate called" "$log" | cut -c1-200)"
    failing=$log
  fi
done
[ -z "$failing" ] || fail "$failing" "saved findings still fail (above; the last one's report first)"

echo "fuzz.$TARGET: (b) fuzzing 20 s, -seed=1"
"$BIN" $LIMITS -seed=1 -max_total_time=20 -print_final_stats=1 \
  -artifact_prefix="$WORK/artifacts/" "$WORK/corpus" "$WORK/seeds" >"$WORK/fuzz.log" 2>&1 ||
  fail "$WORK/fuzz.log" "fuzzing found an input that crashes, leaks, hangs or runs out of memory"
stat() { sed -n "s/^stat::$1: *//p" "$WORK/fuzz.log"; }
echo "fuzz.$TARGET: $(stat number_of_executed_units) runs in 20 s," \
  "$(stat average_exec_per_sec) exec/s, $(ls "$WORK/corpus" | wc -l) new corpus inputs," \
  "peak RSS $(stat peak_rss_mb) MB"
