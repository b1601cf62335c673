#!/bin/sh
# A bad-input fixture must make `nvlplace validate` exit 2 with exactly the message in its
# "# expect:" line on stderr, and must not crash. Usage: bad_fixture.sh NVLPLACE_BINARY FILE
set -u
BIN=$1; FILE=$2
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 1
WANT="nvlplace: $FILE:$(sed -n 's/^# expect: //p' "$FILE")"
GOT=$("$BIN" validate "$FILE" 2>&1 >/dev/null)
RC=$?
if [ "$RC" -ne 2 ]; then echo "exit $RC, want 2; stderr: $GOT"; exit 1; fi
if [ "$GOT" != "$WANT" ]; then printf 'stderr:\n  %s\nwant:\n  %s\n' "$GOT" "$WANT"; exit 1; fi
