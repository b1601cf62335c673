#!/bin/sh
# Golden test of `nvlplace export slurm`: the written topology.conf and gres.conf must equal
# tests/cli/golden/export/NAME/ (NVLPLACE_UPDATE_GOLDEN=1 rewrites them; review the diff).
# Usage: export.sh NVLPLACE_BINARY CONFIG.yaml
set -eu
BIN=$1; CONFIG=$2
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
NAME=$(basename "$CONFIG" .yaml)
WANT="tests/cli/golden/export/$NAME"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
"$BIN" export slurm "$CONFIG" --out-dir "$TMP" >/dev/null
if [ "${NVLPLACE_UPDATE_GOLDEN:-0}" = 1 ]; then
  mkdir -p "$WANT" && cp "$TMP/topology.conf" "$TMP/gres.conf" "$WANT/"
  echo "updated $WANT"
  exit 0
fi
diff -u "$WANT/topology.conf" "$TMP/topology.conf"
diff -u "$WANT/gres.conf" "$TMP/gres.conf"
