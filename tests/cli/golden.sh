#!/bin/sh
# Golden CLI test: runs `nvlplace ARGS...` from the source root and compares its stdout,
# stderr and exit code with tests/cli/golden/NAME.out (the checkout's path reads <src>, so the
# result does not depend on where the clone lives). NVLPLACE_UPDATE_GOLDEN=1 rewrites it.
# Usage: golden.sh NVLPLACE_BINARY NAME ARGS...
set -u
BIN=$1; NAME=$2; shift 2
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 1
WANT="tests/cli/golden/$NAME.out"
GOT=$(mktemp)
ERR=$(mktemp)
"$BIN" "$@" >"$GOT.stdout" 2>"$ERR"
RC=$?
{
  echo "# nvlplace $*"
  cat "$GOT.stdout"
  echo "# stderr"
  cat "$ERR"
  echo "# exit $RC"
} | sed "s|$ROOT|<src>|g" >"$GOT"
rm -f "$GOT.stdout" "$ERR"
if [ "${NVLPLACE_UPDATE_GOLDEN:-0}" = 1 ]; then
  cp "$GOT" "$WANT"
  echo "updated $WANT"
  rm -f "$GOT"
  exit 0
fi
if [ ! -f "$WANT" ]; then
  echo "no golden file $WANT; run with NVLPLACE_UPDATE_GOLDEN=1 and review it"
  cat "$GOT"
  rm -f "$GOT"
  exit 1
fi
if ! diff -u "$WANT" "$GOT"; then
  rm -f "$GOT"
  exit 1
fi
rm -f "$GOT"
