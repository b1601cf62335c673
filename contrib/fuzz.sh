#!/bin/bash
# Longer fuzzing campaigns than CI's 20 s (tests/fuzz/): builds, then fuzzes each TARGET (all
# by default) for N minutes, one at a time, with a corpus kept in build/fuzz/corpus/TARGET.
# Each input that crashes, leaks, hangs or runs out of memory is minimised where libFuzzer can
# and copied to tests/fuzz/findings/TARGET/ as KIND-ERROR-FUNCTION-HASH (e.g.
# crash-SEGV-nvl_decide-1a2b3c4d), where ctest's fuzz tests rerun it from then on.
# Usage: contrib/fuzz.sh [--minutes N] [--keep-going] [TARGET...]
#   --keep-going: fork mode, going on after a finding to collect several (never in CI).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${NVLPLACE_BUILD_DIR:-$ROOT/build}
FUZZ=$BUILD/fuzz
MINUTES=10
KEEP_GOING=
while [[ $# -gt 0 && $1 == -* ]]; do
  case $1 in
    --minutes) MINUTES=$2; shift 2 ;;
    --keep-going) KEEP_GOING="-fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1"; shift ;;
    -h|--help) sed -n '2,8p' "$0"; exit 0 ;;
    *) echo "fuzz.sh: unknown option $1" >&2; sed -n '2,8p' "$0" >&2; exit 2 ;;
  esac
done
command -v clang >/dev/null || { echo "fuzz.sh: needs clang (contrib/setup.sh installs it)" >&2; exit 2; }
"$ROOT/contrib/build.sh" >/dev/null
if [[ $# -eq 0 ]]; then
  set -- $(cd "$FUZZ/bin" && ls -- *_fuzz | sed 's/_fuzz$//')
fi
LIMITS=(-rss_limit_mb=1024 -malloc_limit_mb=1024 -timeout=10)  # as in tests/fuzz/run.sh
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

# name KIND LOG: KIND[-ERROR]-WHERE from the report: the sanitizer's error (SEGV, stack-overflow,
# signed-integer-overflow, terminate, malloc or rss for an oom, check for a FUZZ_CHECK) and the
# first stack frame in this repository outside tests/fuzz (for a FUZZ_CHECK, its message).
name() {
  local err frame
  err=$(grep -a -m1 -oE "ERROR: (AddressSanitizer|libFuzzer): [a-zA-Z-]+|runtime error: [^:,]*|FUZZ_CHECK|terminate called" "$2" |
    sed -E 's/.*(Sanitizer|libFuzzer): //; s/runtime error: //; s/FUZZ_CHECK/check/; s/ called//' |
    tr ' ' '-' | cut -c1-40) || true
  case $err in
    out-of-memory) grep -aq "malloc(" "$2" && err=malloc || err=rss ;;
    deadly|timeout) err= ;;
  esac
  frame=$(grep -a -E "^ +#[0-9]+ .* in .* $ROOT/(placement|policies|contrib|plugin)/" "$2" | head -n1 |
    sed -E 's/.* in //; s/\(anonymous namespace\):://g; s/\(.*//; s/.*:://; s/ .*//') || true
  if [[ $err == check ]]; then  # the property: its message, up to the first ':' or '('
    frame=$(grep -a -m1 -o "FUZZ_CHECK.*failed: [^:(]*" "$2" | sed 's/.*failed: //; s/ *$//' |
      tr ' ' '-' | cut -c1-48) || true
  fi
  if [[ -z $frame ]]; then  # else the fuzz target's line
    frame=$(grep -a -m1 -oE "[a-z_]+_fuzz\.cc?:[0-9]+" "$2" | tr ':.' '--') || true
  fi
  echo "$1${err:+-$err}-${frame:-unknown}" | tr -c 'A-Za-z0-9_.\n-' '-'
}

status=0
for t in "$@"; do
  bin=$FUZZ/bin/${t}_fuzz
  [[ -x $bin ]] || { echo "fuzz.sh: no target '$t' ($bin)" >&2; exit 2; }
  art=$(mktemp -d)
  mkdir -p "$FUZZ/corpus/$t"
  "$ROOT/tests/fuzz/seeds.sh" "$t" "$FUZZ/seeds/$t" "$BUILD/contrib/nvlplace"
  echo "fuzz.sh: $t for $MINUTES min (corpus $FUZZ/corpus/$t)"
  "$bin" "${LIMITS[@]}" $KEEP_GOING -max_total_time=$((MINUTES * 60)) -print_final_stats=1 \
    -artifact_prefix="$art/" "$FUZZ/corpus/$t" "$FUZZ/seeds/$t" >"$art/fuzz.log" 2>&1 || true
  # The run's size: final stats, or in fork mode (--keep-going) its last status line.
  { grep -a "^stat::\(number_of_executed_units\|average_exec_per_sec\|peak_rss_mb\)" "$art/fuzz.log" ||
    grep -a "^#[0-9]*:" "$art/fuzz.log" | tail -n1; } | sed "s/^/  /" || true
  dir=$ROOT/tests/fuzz/findings/$t  # made with its first finding, never left empty
  dups=0
  for a in "$art"/{crash,leak,timeout,oom,slow-unit}-*; do
    [[ -f $a ]] || continue
    status=1
    kind=$(basename "$a" | sed 's/-.*//')
    "$bin" "${LIMITS[@]}" "$a" >"$a.log" 2>&1 || true
    id=$(name "$kind" "$a.log")
    if ls "$dir/$id"-* >/dev/null 2>&1; then  # the same error in the same function: most
      dups=$((dups + 1))                       # likely the same bug
      continue
    fi
    if [[ $kind == crash || $kind == leak ]]; then  # kept only if it still fails the same way
      "$bin" "${LIMITS[@]}" -minimize_crash=1 -max_total_time=60 -exact_artifact_path="$a.min" \
        "$a" >/dev/null 2>&1 || true
      if [[ -s $a.min ]] && { "$bin" "${LIMITS[@]}" "$a.min" >"$a.min.log" 2>&1 || true; } &&
         [[ $(name "$kind" "$a.min.log") == "$id" ]]; then
        mv "$a.min" "$a"
        mv "$a.min.log" "$a.log"
      fi
    fi
    out=$dir/$id-$(sha1sum "$a" | cut -c1-8)
    mkdir -p "$dir"
    cp "$a" "$out"
    echo "fuzz.sh: $t: saved $out"
    grep -a -m1 -E "ERROR|runtime error|FUZZ_CHECK|terminate" "$a.log" | cut -c1-300 | sed 's/^/  /'
  done
  [[ $dups == 0 ]] || echo "fuzz.sh: $t: $dups more inputs like findings already saved, not kept"
  rm -rf "$art"
done
exit $status
