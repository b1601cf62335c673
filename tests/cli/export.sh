#!/bin/sh
# Golden test of `nvlplace export slurm`: the files it writes (topology.conf, gres.conf and, for
# a cluster with multi-node NVLink domains, topology-block.conf or topology.yaml) must equal
# tests/cli/golden/export/NAME/, file for file (NVLPLACE_UPDATE_GOLDEN=1 rewrites them; review
# the diff). NAME defaults to the config's name; ARGS go to the command (--slurm-release 26.05).
# Usage: export.sh NVLPLACE_BINARY CONFIG.yaml [NAME [ARGS...]]
set -eu
BIN=$1; CONFIG=$2
NAME=${3:-$(basename "$CONFIG" .yaml)}
shift $(($# < 3 ? $# : 3))
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
WANT="tests/cli/golden/export/$NAME"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
"$BIN" export slurm "$CONFIG" --out-dir "$TMP" "$@" >/dev/null
if [ "${NVLPLACE_UPDATE_GOLDEN:-0}" = 1 ]; then
  rm -rf "$WANT" && mkdir -p "$WANT" && cp "$TMP"/* "$WANT/"
  echo "updated $WANT"
  exit 0
fi
diff -ru "$WANT" "$TMP"
